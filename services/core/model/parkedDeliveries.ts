// Delivery jobs parked while their destination's circuit breaker is open (the domain is marked
// unavailable): kept, not dropped, and sent again in their original order when the domain is back.
// `_id` is a MongoDB ObjectId, so its order is the order in which jobs were parked.
import type { ObjectId } from 'mongodb';
import { defineCollection } from '../db/mongo.ts';

export interface ParkedDeliveryDoc {
  _id: ObjectId;
  /** Destination host (with port), lower case: the breaker's unit. */
  host: string;
  /** Place in the host's queue: parked jobs go out again in this order. */
  seq: number;
  /** The DeliveryRequested record, Avro single-object encoded (what went over Kafka), in base64. */
  job: string;
  /** The Kafka key the job is sent with again (the inbox host). */
  key: string;
  /** Failed attempts of this job before it was parked. */
  failures: number;
  /** When the activity was built: jobs older than the retry horizon are dropped on resume. */
  createdAt: Date;
  parkedAt: Date;
}

export const parkedDeliveries = defineCollection<ParkedDeliveryDoc>('parked_deliveries', [
  { key: { host: 1, seq: 1, _id: 1 }, name: 'host_queue_order' },
]);
