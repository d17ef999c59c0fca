// "Is the server on this port up and is it the right kind?" — one quick check per server.
import net from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';

export type ProbeResult = 'ready' | 'closed' | 'foreign';

function tcp(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function probeRedis(host: string, port: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let reply = '';
    let connected = false;
    const done = (r: ProbeResult) => {
      socket.destroy();
      resolve(r);
    };
    socket.setTimeout(1500, () => done(connected ? 'foreign' : 'closed'));
    socket.once('connect', () => {
      connected = true;
      socket.write('PING\r\n');
    });
    socket.on('data', (d) => {
      reply += d.toString('latin1');
      if (reply.includes('\r\n'))
        done(reply.startsWith('+PONG') ? 'ready' : reply.startsWith('-LOADING') ? 'closed' : 'foreign');
    });
    socket.once('error', () => done(connected ? 'foreign' : 'closed'));
  });
}

export async function probeMongo(host: string, port: number): Promise<ProbeResult> {
  if (!(await tcp(host, port, 1000))) return 'closed';
  const client = new MongoClient(`mongodb://${host}:${port}/?directConnection=true`, {
    serverSelectionTimeoutMS: 1500,
    connectTimeoutMS: 1500,
  });
  try {
    await client.db('admin').command({ ping: 1 });
    return 'ready';
  } catch {
    return 'foreign';
  } finally {
    await client.close().catch(() => undefined);
  }
}

export async function probeKafka(host: string, port: number): Promise<ProbeResult> {
  if (!(await tcp(host, port, 1000))) return 'closed';
  const admin = new Kafka({
    clientId: 'fedisrv-local-infra',
    brokers: [`${host}:${port}`],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1500,
    requestTimeout: 3000,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0 ? 'ready' : 'closed';
  } catch {
    // A broker still starting refuses metadata requests for a moment: not ready yet.
    return 'closed';
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
