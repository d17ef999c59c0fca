// How the pages show values: dates in UTC to the minute (the same for every reader until the
// pages learn the reader's time zone).
export function formatDate(d: Date): string {
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
