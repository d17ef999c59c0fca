// Every pipeline (consumer group) by name: `node services/main.ts pipeline <name>` runs one, the
// `all` role runs them all. A pipeline starts its consumers and returns how to stop them (commit
// what was finished, leave the group).
import type { Core } from '../services/core/context.ts';

export interface RunningPipeline {
  stop(): Promise<void>;
}

export const pipelines: Record<string, (core: Core) => Promise<RunningPipeline>> = {};
