// Parameter casting the way Mastodon (Rails) reads form and JSON input, shared by routes and by core
// operations that take stored raw parameters (scheduled statuses, polls).

const FALSE_VALUES = new Set(['0', 'f', 'false', 'off', 'n', 'no']);

/** ActiveModel boolean casting: "0", "f", "false", "off" are false; undefined means "not given" (undefined, null or ""). */
export function railsBoolean(value: unknown): boolean | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value !== 'string') return undefined;
  return !FALSE_VALUES.has(value.trim().toLowerCase());
}
