/** `s` as a literal inside a regular expression (for MongoDB `$regex` filters on user input). */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
