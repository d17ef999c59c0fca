// Starting the Fedify peer (server.ts) as a child process and driving it through its /_test/
// control requests. `stop()` ends the child.
import { killChild, reportedPort, startNode } from '../../support/processes.ts';

export interface FedifyPeer {
  /** http://localhost:<port> */
  url: string;
  /** localhost:<port> */
  domain: string;
  /** Sends a control request; its answer is checked field by field by the tests. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers differ per control request
  control(path: string, body?: Record<string, string>): Promise<any>;
  stop(): Promise<void>;
}

export async function startFedifyPeer(): Promise<FedifyPeer> {
  const peer = startNode('test/federation/fedifyPeer/server.ts', [], {});
  let port: number;
  try {
    port = await reportedPort(peer, /fedify peer ready on port (\d+)/);
  } catch (err) {
    await killChild(peer);
    throw err;
  }
  return {
    url: `http://localhost:${port}`,
    domain: `localhost:${port}`,
    async control(path, body = {}) {
      const res = await fetch(`http://127.0.0.1:${port}/_test/${path}`, { method: 'POST', body: JSON.stringify(body) });
      const json: unknown = await res.json();
      if (res.status !== 200) throw new Error(`fedify peer ${path}: ${JSON.stringify(json)}`);
      return json;
    },
    stop: () => killChild(peer),
  };
}
