// Avro building blocks shared by the codec, the compatibility check and the type generator:
// parsing schemas (with `timestamp-millis` as Date), the Parsing Canonical Form and its
// CRC-64-AVRO (Rabin) fingerprint as the Avro specification defines them.
import avro from 'avsc';

export type AvroType = avro.Type;
export type AvroSchema = avro.Schema;

/**
 * `{"type": "long", "logicalType": "timestamp-millis"}` as a JS Date. Encoding also accepts an ISO
 * string or epoch milliseconds: outbox payloads pass through JSON, which turns Dates into strings.
 */
class TimestampMillisType extends avro.types.LogicalType {
  protected override _fromValue(val: number): Date {
    return new Date(val);
  }
  protected override _toValue(val: unknown): number | undefined {
    if (val instanceof Date) return Number.isNaN(val.getTime()) ? undefined : val.getTime();
    if (typeof val === 'number' && Number.isSafeInteger(val)) return val;
    if (typeof val === 'string') {
      const ms = Date.parse(val);
      return Number.isNaN(ms) ? undefined : ms;
    }
    return undefined;
  }
  protected override _resolve(type: avro.Type): ((v: number) => Date) | undefined {
    if (avro.Type.isType(type, 'long', 'logical:timestamp-millis')) return (v: number) => this._fromValue(v);
    return undefined;
  }
}

const logicalTypes = { 'timestamp-millis': TimestampMillisType };

/** Parses a schema as the application sees it (timestamps as Date, unions unwrapped). */
export function parseSchema(schema: AvroSchema): AvroType {
  return avro.Type.forSchema(schema, { logicalTypes, wrapUnions: 'auto' });
}

/** Parses a schema as written bytes see it (no logical types), for fingerprints and resolution. */
export function parseWriterSchema(schema: AvroSchema): AvroType {
  return avro.Type.forSchema(schema, { wrapUnions: 'auto' });
}

/** The Avro specification's Parsing Canonical Form (avsc's `schema()` output is exactly that). */
export function canonicalForm(schema: AvroSchema): string {
  return JSON.stringify(parseWriterSchema(schema).schema());
}

const EMPTY = 0xc15d213aa4d7a795n;
const MASK = (1n << 64n) - 1n;
const TABLE: bigint[] = Array.from({ length: 256 }, (_, i) => {
  let fp = BigInt(i);
  for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n) & MASK);
  return fp;
});

/** CRC-64-AVRO of some bytes, as an unsigned 64-bit integer. */
export function rabin64(bytes: Uint8Array): bigint {
  let fp = EMPTY;
  for (const b of bytes) fp = (fp >> 8n) ^ TABLE[Number((fp ^ BigInt(b)) & 0xffn)];
  return fp;
}

/** The 8-byte little-endian CRC-64-AVRO fingerprint of a schema, as single-object encoding writes it. */
export function fingerprint(schema: AvroSchema): Buffer {
  const buf = Buffer.alloc(8);
  buf.writeBigUInt64LE(rabin64(Buffer.from(canonicalForm(schema), 'utf8')));
  return buf;
}
