// Backward compatibility of event schemas: the current schema of every event (the reader) must be
// able to read data written with each of its earlier versions kept under schemas/history/, so a
// consumer on new code keeps reading events still in Kafka (or produced by not-yet-updated processes).
import { parseSchema, parseWriterSchema, fingerprint, type AvroSchema } from './avro.ts';
import type { SchemaSources, EventSchema } from './sources.ts';

export interface CompatProblem {
  name: string;
  version?: number;
  message: string;
}

/** Can data written with `writer` be read with `reader`? Returns why not, or null when it can. */
export function readProblem(reader: EventSchema, writer: EventSchema): string | null {
  try {
    parseSchema(reader as unknown as AvroSchema).createResolver(parseWriterSchema(writer as unknown as AvroSchema));
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

export function checkCompatibility(sources: SchemaSources): CompatProblem[] {
  const problems: CompatProblem[] = [];
  const current = new Map(sources.current.map((c) => [c.name, c.schema]));
  const versionsByName = new Map<string, number[]>();
  for (const h of sources.history) {
    versionsByName.set(h.name, [...(versionsByName.get(h.name) ?? []), h.version]);
    const reader = current.get(h.name);
    if (!reader) {
      problems.push({
        name: h.name,
        version: h.version,
        message: 'has history but no current schema (events are never removed)',
      });
      continue;
    }
    if (h.schema.topic !== reader.topic) {
      problems.push({
        name: h.name,
        version: h.version,
        message: `topic changed from "${h.schema.topic}" to "${reader.topic}"`,
      });
    }
    const problem = readProblem(reader, h.schema);
    if (problem)
      problems.push({
        name: h.name,
        version: h.version,
        message: `cannot read data written with v${h.version}: ${problem}`,
      });
  }
  for (const [name, versions] of versionsByName) {
    versions.forEach((v, i) => {
      if (v !== i + 1)
        problems.push({
          name,
          message: `history versions must be v1..vN without gaps, found v${v} at position ${i + 1}`,
        });
    });
  }
  return problems;
}

/** True when the current schema's written form is one of the versions kept in history. */
export function isInHistory(sources: SchemaSources, name: string): boolean {
  const cur = sources.current.find((c) => c.name === name);
  if (!cur) return false;
  const fp = fingerprint(cur.schema as unknown as AvroSchema);
  return sources.history.some((h) => h.name === name && fingerprint(h.schema as unknown as AvroSchema).equals(fp));
}
