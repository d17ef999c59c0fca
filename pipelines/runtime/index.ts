// The consumer runtime pipelines are built on (see runPipeline.ts).
export { runPipeline, BACKGROUND_FETCH } from './runPipeline.ts';
export { EventDeduper, EventInFlightError } from './dedup.ts';
export type {
  Pipeline,
  PipelineContext,
  PipelineEvent,
  PipelineOptions,
  PipelineOverrides,
  EventHandler,
  BatchHandler,
} from './types.ts';
export { replayDeadLetters } from './deadLetters.ts';
