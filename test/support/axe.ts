// axe-core run inside a Chromium page: the accessibility violations of impact "serious" or
// "critical" (WCAG 2.x A and AA rules). The page's context must bypass its CSP (the pages allow no
// script), which playwright does with `bypassCSP: true`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(join(__dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (o: unknown) => Promise<{ violations: unknown[] }> } }).axe;
    const result = await axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations as { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

/** Fails the test with the page's name and its serious or critical violations, if any. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  const violations = await seriousAxeViolations(page);
  expect({ page: name, violations }).toEqual({ page: name, violations: [] });
}
