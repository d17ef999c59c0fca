// Tests that need a tool outside npm (Chromium, the Python clients) skip with a warning on a
// developer's machine that lacks it, but fail under CI, which installs every such tool: a test
// must never vanish silently from CI's count.

/** `describe` when the tool is there; otherwise `describe.skip` locally, an error under CI. */
export function describeWithTool(available: boolean, file: string, missing: string): jest.Describe {
  if (available) return describe;
  if (process.env.CI) throw new Error(`${file}: ${missing}; CI installs it, so this is a failure, not a skip`);
  console.warn(`${file} skipped: ${missing}`);
  return describe.skip;
}
