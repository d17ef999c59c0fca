import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  loadSchemaSources,
  conventionProblems,
  type SchemaSources,
  type EventSchema,
} from '../../../schemas/sources.ts';
import { checkCompatibility, isInHistory } from '../../../schemas/compat.ts';

const dir = join(process.cwd(), 'schemas');

describe('schemas in the repository', () => {
  const sources = loadSchemaSources(dir);

  it('are backward compatible with every version kept in schemas/history', () => {
    expect(checkCompatibility(sources)).toEqual([]);
  });

  it('each have their current written form kept in history (run `npm run schemas`)', () => {
    expect(sources.current.filter((c) => !isInHistory(sources, c.name)).map((c) => c.name)).toEqual([]);
  });

  it('match the generated schemas/index.ts and schemas/catalog.ts (run `npm run schemas`)', () => {
    // A child process: the generator formats with prettier, which jest's module system cannot load.
    const out = spawnSync('./node_modules/.bin/node', ['schemas/generate.ts', '--check'], { encoding: 'utf8' });
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
  });
});

const base: EventSchema = {
  type: 'record',
  name: 'Thing',
  namespace: 'social.events',
  topic: 'probe',
  fields: [
    { name: 'eventId', type: 'string' },
    { name: 'occurredAt', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'thingId', type: 'string' },
  ],
};

function withChange(current: EventSchema): SchemaSources {
  return {
    current: [{ name: 'Thing', file: 'Thing.avsc', schema: current }],
    history: [{ name: 'Thing', version: 1, file: 'history/Thing/v1.avsc', schema: base }],
  };
}

describe('compatibility check', () => {
  it('accepts a new field with a default', () => {
    const next = { ...base, fields: [...base.fields, { name: 'note', type: ['null', 'string'], default: null }] };
    expect(checkCompatibility(withChange(next))).toEqual([]);
  });

  it('accepts removing a field', () => {
    expect(checkCompatibility(withChange({ ...base, fields: base.fields.slice(0, 2) }))).toEqual([]);
  });

  it('rejects a new field without a default', () => {
    const next = { ...base, fields: [...base.fields, { name: 'required', type: 'string' }] };
    const problems = checkCompatibility(withChange(next));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ name: 'Thing', version: 1 });
    expect(problems[0].message).toMatch(/cannot read data written with v1/);
  });

  it('rejects a changed field type', () => {
    const next = { ...base, fields: [...base.fields.slice(0, 2), { name: 'thingId', type: 'int' }] };
    expect(checkCompatibility(withChange(next))).toHaveLength(1);
  });

  it('rejects moving an event to another topic', () => {
    expect(checkCompatibility(withChange({ ...base, topic: 'other' }))[0].message).toMatch(/topic changed/);
  });

  it('rejects gaps in the kept versions', () => {
    const sources = withChange(base);
    sources.history[0].version = 2;
    expect(checkCompatibility(sources)[0].message).toMatch(/without gaps/);
  });
});

describe('schema conventions', () => {
  it('accept a well-formed event', () => {
    expect(conventionProblems('Thing', base)).toEqual([]);
  });

  it('require eventId, occurredAt, the namespace and a topic', () => {
    const bad = { ...base, namespace: 'x', topic: '', fields: base.fields.slice(2) } as EventSchema;
    expect(conventionProblems('Thing', bad)).toEqual([
      'namespace must be "social.events"',
      'needs a "topic" attribute naming its coarse topic (lower case)',
      'first field must be eventId: string',
      'second field must be occurredAt: {"type": "long", "logicalType": "timestamp-millis"}',
    ]);
  });

  it('refuse bytes (payloads travel through the outbox as JSON)', () => {
    const bad = { ...base, fields: [...base.fields, { name: 'b', type: 'bytes' }] };
    expect(conventionProblems('Thing', bad)).toContain('bytes and fixed are not allowed');
  });
});
