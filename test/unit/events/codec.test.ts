import { rabin64, canonicalForm, fingerprint, type AvroSchema } from '../../../schemas/avro.ts';
import { EventCodec, EventDecodeError, EventEncodeError, eventCodec, MARKER } from '../../../schemas/codec.ts';
import { currentSchemas } from '../../../schemas/catalog.ts';

// Test vectors from Apache Avro's share/test/data/schema-tests.txt (fingerprints as Java signed longs).
const vectors: Array<[string, string, bigint]> = [
  ['"null"', '"null"', 7195948357588979594n],
  ['"boolean"', '"boolean"', -6970731678124411036n],
  ['"string"', '"string"', -8142146995180207161n],
  [
    '{"fields":[], "type":"record", "name":"foo", "namespace":"x.y"}',
    '{"name":"x.y.foo","type":"record","fields":[]}',
    5916914534497305771n,
  ],
  [
    '{ "fields":[{"type":"boolean", "aliases":[], "name":"f1", "default":true}, {"order":"descending","name":"f2","doc":"Hello","type":"int"}], "type":"record", "name":"foo" }',
    '{"name":"foo","type":"record","fields":[{"name":"f1","type":"boolean"},{"name":"f2","type":"int"}]}',
    -4860222112080293046n,
  ],
  [
    '{"namespace":"x.y.z", "type":"enum", "name":"foo", "doc":"foo bar", "symbols":["A1", "A2"]}',
    '{"name":"x.y.z.foo","type":"enum","symbols":["A1","A2"]}',
    -4448647247586288245n,
  ],
  ['{ "values":"string", "type":"map"}', '{"type":"map","values":"string"}', -8732877298790414990n],
  [
    '{"name":"PigValue","type":"record", "fields":[{"name":"value", "type":["null", "int", "long", "PigValue"]}]}',
    '{"name":"PigValue","type":"record","fields":[{"name":"value","type":["null","int","long","PigValue"]}]}',
    -1759257747318642341n,
  ],
];

describe('CRC-64-AVRO fingerprint', () => {
  it.each(vectors)('%s', (input, canonical, expected) => {
    expect(canonicalForm(JSON.parse(input))).toBe(canonical);
    expect(BigInt.asIntN(64, rabin64(Buffer.from(canonical)))).toBe(expected);
    const fp = fingerprint(JSON.parse(input));
    expect(fp.readBigInt64LE()).toBe(expected);
  });

  it('ignores attributes outside the canonical form (topic, doc, defaults, logical types)', () => {
    const a = { type: 'record', name: 'R', namespace: 'n', fields: [{ name: 't', type: 'long' }] };
    const b = {
      ...a,
      topic: 'x',
      doc: 'd',
      fields: [{ name: 't', type: { type: 'long', logicalType: 'timestamp-millis' }, default: 0 }],
    };
    expect(fingerprint(a as AvroSchema).equals(fingerprint(b as AvroSchema))).toBe(true);
  });
});

describe('EventCodec', () => {
  const occurredAt = new Date('2026-01-02T03:04:05.678Z');

  it('round-trips an event in single-object encoding', () => {
    const codec = eventCodec();
    const buf = codec.encode('MailRequested', {
      eventId: 'e1',
      occurredAt,
      to: 'a@example.com',
      subject: 'Hi',
      text: 'Hello',
      template: 'welcome',
    });
    expect(buf.subarray(0, 2)).toEqual(MARKER);
    expect(buf.subarray(2, 10).equals(fingerprint(currentSchemas.MailRequested as never))).toBe(true);
    const decoded = codec.decode(buf);
    expect(decoded.type).toBe('MailRequested');
    expect({ ...decoded.record }).toEqual({
      eventId: 'e1',
      occurredAt,
      to: 'a@example.com',
      subject: 'Hi',
      text: 'Hello',
      html: null,
      template: 'welcome',
      headers: null,
    });
    expect(decoded.record.occurredAt).toBeInstanceOf(Date);
  });

  it('accepts timestamps that went through JSON (ISO strings)', () => {
    const codec = eventCodec();
    const buf = codec.encode('ProbeSent', {
      eventId: 'e',
      occurredAt: occurredAt.toISOString(),
      probeId: 'p',
      counter: 'c',
    });
    expect(codec.decode(buf).record.occurredAt).toEqual(occurredAt);
  });

  it('rejects invalid records with the failing field', () => {
    expect(() => eventCodec().encode('ProbeSent', { eventId: 'e', occurredAt, probeId: 7, counter: 'c' })).toThrow(
      new EventEncodeError('invalid ProbeSent: bad value at probeId'),
    );
  });

  it('reads data written with an older schema version through the current one', () => {
    const v1 = {
      type: 'record',
      name: 'Thing',
      namespace: 'social.events',
      topic: 'probe',
      fields: [
        { name: 'eventId', type: 'string' },
        { name: 'occurredAt', type: { type: 'long', logicalType: 'timestamp-millis' } },
      ],
    };
    const v2 = { ...v1, fields: [...v1.fields, { name: 'extra', type: ['null', 'string'], default: null }] };
    const oldCodec = new EventCodec({ Thing: v1 }, [{ name: 'Thing', version: 1, schema: v1 }]);
    const newCodec = new EventCodec({ Thing: v2 }, [
      { name: 'Thing', version: 1, schema: v1 },
      { name: 'Thing', version: 2, schema: v2 },
    ]);
    const old = oldCodec.encode('Thing' as never, { eventId: 'x', occurredAt });
    const decoded = newCodec.decode(old);
    expect(decoded.writerVersion).toBe(1);
    expect({ ...decoded.record }).toEqual({ eventId: 'x', occurredAt, extra: null });
  });

  it('tells why a buffer cannot be decoded', () => {
    const codec = eventCodec();
    const reason = (buf: Buffer) => {
      try {
        codec.decode(buf);
        return 'decoded';
      } catch (err) {
        return (err as EventDecodeError).reason;
      }
    };
    expect(reason(Buffer.from('{"json":true}'))).toBe('not-single-object');
    expect(reason(Buffer.concat([MARKER, Buffer.alloc(8, 0xab), Buffer.from([2, 65])]))).toBe('unknown-schema');
    const good = codec.encode('ProbeSent', { eventId: 'e', occurredAt, probeId: 'p', counter: 'c' });
    expect(reason(good.subarray(0, good.length - 3))).toBe('malformed');
  });
});
