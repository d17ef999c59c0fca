// The annual-reports pipeline: computes the annual reports (Wrapstodon) users asked for
// (AnnualReportRequested) from the stored data, core/annualReports/reports.ts. Idempotent: a
// redelivered request finds the report available and does nothing.
import type { Core } from '../../services/core/context.ts';
import { generateReport } from '../../services/core/annualReports/reports.ts';
import { runPipeline, type Pipeline, type PipelineOverrides } from '../runtime/index.ts';

export const TYPES = ['AnnualReportRequested'] as const;
type AnnualReportEvent = (typeof TYPES)[number];

export type AnnualReportsPipelineOptions = PipelineOverrides<AnnualReportEvent>;

export function runAnnualReportsPipeline(core: Core, opts: AnnualReportsPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'annual-reports',
    types: TYPES,
    ...opts,
    async handleEvent(event) {
      await generateReport(core, BigInt(event.payload.accountId), event.payload.year);
    },
  });
}
