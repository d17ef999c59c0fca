// The image's HEALTHCHECK for any role: healthy when the role's readiness answers 200 — the API
// and pipelines on PORT (`/health/ready`), the streaming server on STREAMING_PORT. A role binds
// only its own port, so the other request is simply refused.
const port = process.env.PORT ?? '3000';
const streamingPort = process.env.STREAMING_PORT ?? '4000';

async function ok(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

const checks = await Promise.all([
  ok(`http://127.0.0.1:${port}/health/ready`),
  ok(`http://127.0.0.1:${streamingPort}/api/v1/streaming/health`),
]);
process.exit(checks.some(Boolean) ? 0 : 1);
