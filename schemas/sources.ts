// Reads the event schemas kept in the repository: the current `schemas/<Name>.avsc` of each event
// and every earlier version under `schemas/history/<Name>/v<N>.avsc`, and checks the conventions
// every event schema follows.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseSchema, type AvroSchema } from './avro.ts';

export const EVENT_NAMESPACE = 'social.events';

export interface FieldSchema {
  name: string;
  type: unknown;
  default?: unknown;
  doc?: string;
}

/** A top-level event schema as stored in an .avsc file. */
export interface EventSchema {
  type: 'record';
  name: string;
  namespace: string;
  /** Coarse Kafka topic the event goes to (without the deployment's prefix). */
  topic: string;
  doc?: string;
  fields: FieldSchema[];
}

export interface CurrentSchema {
  name: string;
  file: string;
  schema: EventSchema;
}

export interface HistoricSchema {
  name: string;
  version: number;
  file: string;
  schema: EventSchema;
}

export interface SchemaSources {
  current: CurrentSchema[];
  history: HistoricSchema[];
}

export class SchemaError extends Error {}

function readJson(file: string): EventSchema {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as EventSchema;
  } catch (err) {
    throw new SchemaError(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

/** Conventions every event schema follows; returns the problems found (empty when fine). */
export function conventionProblems(name: string, schema: EventSchema): string[] {
  const problems: string[] = [];
  if (schema.type !== 'record') problems.push('must be a record');
  if (schema.name !== name) problems.push(`record name "${schema.name}" must match the file name "${name}"`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) problems.push('name must be PascalCase');
  if (schema.namespace !== EVENT_NAMESPACE) problems.push(`namespace must be "${EVENT_NAMESPACE}"`);
  if (typeof schema.topic !== 'string' || !/^[a-z][a-z0-9-]*$/.test(schema.topic)) {
    problems.push('needs a "topic" attribute naming its coarse topic (lower case)');
  }
  const [first, second] = schema.fields ?? [];
  if (first?.name !== 'eventId' || first.type !== 'string') problems.push('first field must be eventId: string');
  const ts = second?.type as { type?: string; logicalType?: string } | undefined;
  if (second?.name !== 'occurredAt' || ts?.type !== 'long' || ts?.logicalType !== 'timestamp-millis') {
    problems.push('second field must be occurredAt: {"type": "long", "logicalType": "timestamp-millis"}');
  }
  // Payloads travel through the outbox as JSON, which cannot carry bytes.
  if (/"(bytes|fixed)"/.test(JSON.stringify(schema.fields ?? []))) problems.push('bytes and fixed are not allowed');
  try {
    parseSchema(schema as unknown as AvroSchema);
  } catch (err) {
    problems.push(`not a valid Avro schema: ${(err as Error).message}`);
  }
  return problems;
}

/** Loads every schema under `dir` (the `schemas/` folder). Throws SchemaError on a broken convention. */
export function loadSchemaSources(dir: string): SchemaSources {
  const current: CurrentSchema[] = [];
  for (const entry of readdirSync(dir).sort()) {
    if (!entry.endsWith('.avsc')) continue;
    const name = entry.slice(0, -'.avsc'.length);
    const file = join(dir, entry);
    const schema = readJson(file);
    const problems = conventionProblems(name, schema);
    if (problems.length > 0) throw new SchemaError(`${file}: ${problems.join('; ')}`);
    current.push({ name, file, schema });
  }
  const history: HistoricSchema[] = [];
  const historyDir = join(dir, 'history');
  if (existsSync(historyDir)) {
    for (const name of readdirSync(historyDir).sort()) {
      for (const entry of readdirSync(join(historyDir, name))) {
        const m = /^v(\d+)\.avsc$/.exec(entry);
        if (!m) throw new SchemaError(`${join(historyDir, name, entry)}: history files are named v<N>.avsc`);
        const file = join(historyDir, name, entry);
        history.push({ name, version: Number(m[1]), file, schema: readJson(file) });
      }
    }
  }
  history.sort((a, b) => a.name.localeCompare(b.name) || a.version - b.version);
  return { current, history };
}
