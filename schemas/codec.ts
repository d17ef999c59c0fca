// Event codec: Avro binary in the Avro specification's single-object encoding
//   C3 01 | 8-byte little-endian CRC-64-AVRO fingerprint of the writer schema | Avro datum
// Decoding finds the writer schema by its fingerprint among every version kept in the repository
// (schemas/history) and reads the datum through the current schema of that event (avsc resolver),
// so consumers on new code read events written by old code. No schema registry is involved.
import { parseSchema, parseWriterSchema, fingerprint, type AvroSchema, type AvroType } from './avro.ts';
import { currentSchemas, schemaVersions, type SchemaVersion } from './catalog.ts';
import type { EventName, EventRecord } from './index.ts';

export const MARKER = Buffer.from([0xc3, 0x01]);
const HEADER_LENGTH = MARKER.length + 8;

export type DecodeFailure = 'not-single-object' | 'unknown-schema' | 'malformed';

export class EventDecodeError extends Error {
  readonly reason: DecodeFailure;
  constructor(reason: DecodeFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

export class EventEncodeError extends Error {}

export interface DecodedRecord<N extends EventName = EventName> {
  type: N;
  record: EventRecord<N>;
  /** Which kept version of the schema wrote the datum. */
  writerVersion: number;
}

interface WriterEntry {
  version: SchemaVersion;
  /** Created on first use: resolving every version up front would cost start-up time. */
  resolver?: ReturnType<AvroType['createResolver']>;
}

export class EventCodec {
  private readonly writers = new Map<string, { type: AvroType; header: Buffer }>();
  private readonly readers = new Map<string, AvroType>();
  private readonly byFingerprint = new Map<string, WriterEntry>();

  constructor(current: Record<string, object> = currentSchemas, versions: SchemaVersion[] = schemaVersions) {
    for (const [name, schema] of Object.entries(current)) {
      const type = parseSchema(schema as AvroSchema);
      this.readers.set(name, type);
      this.writers.set(name, { type, header: Buffer.concat([MARKER, fingerprint(schema as AvroSchema)]) });
    }
    for (const version of versions) {
      const key = fingerprint(version.schema as AvroSchema).toString('hex');
      // Two versions with one written form read the same: keep the newest.
      this.byFingerprint.set(key, { version });
    }
    for (const [name, schema] of Object.entries(current)) {
      const key = fingerprint(schema as AvroSchema).toString('hex');
      if (!this.byFingerprint.has(key)) this.byFingerprint.set(key, { version: { name, version: 0, schema } });
    }
  }

  /** Encodes a whole event record (eventId and occurredAt included) with the current schema. */
  encode<N extends EventName>(type: N, record: EventRecord<N> | Record<string, unknown>): Buffer {
    const writer = this.writers.get(type);
    if (!writer) throw new EventEncodeError(`unknown event type "${type}"`);
    const paths: string[] = [];
    if (!writer.type.isValid(record, { errorHook: (path) => paths.push(path.join('.') || '(record)') })) {
      throw new EventEncodeError(`invalid ${type}: bad value at ${paths.join(', ')}`);
    }
    return Buffer.concat([writer.header, writer.type.toBuffer(record)]);
  }

  /** The fingerprint (hex) of the current schema of an event: what encode writes. */
  fingerprintOf(type: EventName): string {
    const writer = this.writers.get(type);
    if (!writer) throw new EventEncodeError(`unknown event type "${type}"`);
    return writer.header.subarray(MARKER.length).toString('hex');
  }

  decode(buf: Buffer): DecodedRecord {
    if (buf.length < HEADER_LENGTH || buf[0] !== MARKER[0] || buf[1] !== MARKER[1]) {
      throw new EventDecodeError('not-single-object', 'not an Avro single-object encoded datum');
    }
    const fp = buf.subarray(MARKER.length, HEADER_LENGTH).toString('hex');
    const entry = this.byFingerprint.get(fp);
    if (!entry) throw new EventDecodeError('unknown-schema', `no schema with fingerprint ${fp}`);
    const { name } = entry.version;
    const reader = this.readers.get(name);
    if (!reader) throw new EventDecodeError('unknown-schema', `schema ${name} has no current version`);
    try {
      entry.resolver ??= reader.createResolver(parseWriterSchema(entry.version.schema as AvroSchema));
      const record = reader.fromBuffer(buf.subarray(HEADER_LENGTH), entry.resolver) as EventRecord;
      return { type: name as EventName, record, writerVersion: entry.version.version };
    } catch (err) {
      throw new EventDecodeError('malformed', `cannot decode ${name}: ${(err as Error).message}`);
    }
  }
}

let shared: EventCodec | undefined;

/** The codec over the schemas compiled into this build. */
export function eventCodec(): EventCodec {
  shared ??= new EventCodec();
  return shared;
}
