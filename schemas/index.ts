// PLACEHOLDER until the codec lands: event names and payload types generated from the .avsc files.
export interface EventPayloads {
  [name: string]: Record<string, unknown>;
}
export type EventName = keyof EventPayloads & string;
export type EventPayload<N extends EventName> = EventPayloads[N];
