// PLACEHOLDER (replaced by the infrastructure work): fails fast when the real servers are not up.
import net from 'node:net';

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

export default async function globalSetup(): Promise<void> {
  for (const port of [6390, 19092, 27018]) {
    if (!(await reachable(port))) throw new Error(`test infrastructure not reachable on 127.0.0.1:${port}`);
  }
}
