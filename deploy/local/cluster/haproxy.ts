// HAProxy (Debian's `haproxy`) on the public port, routing as Mastodon's nginx example does:
// `/api/v1/streaming` (WebSocket and SSE) to the streaming processes, everything else to the API.
// Health checks take a process out of rotation while it is not ready; the admin socket lets the
// status command (and fault injection) read and change each server's state.
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import type { ClusterSettings } from './topology.ts';

export function haproxySocket(s: ClusterSettings): string {
  return join(s.runDir, 'haproxy.sock');
}

export function haproxyConfig(s: ClusterSettings): string {
  const servers = (kind: 'api' | 'streaming') =>
    s.processes
      .filter((p) => p.role.kind === kind)
      .map((p) => `  server ${p.name} ${s.host}:${p.port} check inter 1s fall 3 rise 1`)
      .join('\n');
  return `global
  # Two file descriptors per connection must fit the hard limit of an ordinary shell (often 20000 or less).
  maxconn 4000
  stats socket ${haproxySocket(s)} mode 600 level admin
  log stdout format raw local0 warning

defaults
  mode http
  log global
  option httplog
  option forwardfor
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  # WebSocket and SSE connections stay open: an idle stream is not a dead one.
  timeout tunnel 1h
  timeout http-keep-alive 10s
  # A health check may take a busy process a few seconds (Kubernetes' readiness probes here allow
  # three failures in a row); at 1 s both API processes of a loaded machine left rotation at once.
  timeout check 3s
  # A request that found its server gone goes to the other one (connection failures only).
  retries 2
  option redispatch

frontend public
  bind ${s.host}:${s.publicPort}
  acl streaming path_beg /api/v1/streaming
  use_backend streaming if streaming
  default_backend api

backend api
  balance roundrobin
  option httpchk
  http-check send meth GET uri /health/ready ver HTTP/1.1 hdr Host localhost
  http-check expect status 200
${servers('api')}

backend streaming
  balance leastconn
  option httpchk
  # uWebSockets.js answers HTTP/1.0 with 505: checks speak HTTP/1.1.
  http-check send meth GET uri /api/v1/streaming/health ver HTTP/1.1 hdr Host localhost
  http-check expect status 200
${servers('streaming')}

listen stats
  bind ${s.host}:${s.haproxyStatsPort}
  stats enable
  stats uri /
  stats refresh 5s
`;
}

/** Writes the configuration and returns the command that runs HAProxy in the foreground. */
export function prepareHaproxy(s: ClusterSettings): { command: string; args: string[] } {
  mkdirSync(s.runDir, { recursive: true });
  const file = join(s.dir, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig(s));
  return { command: 'haproxy', args: ['-db', '-f', file] };
}

/** One command on HAProxy's admin socket (`show stat`, `disable server api/api-1`, ...). */
export function haproxyCommand(s: ClusterSettings, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(haproxySocket(s));
    let out = '';
    socket.setTimeout(3000, () => socket.destroy(new Error('HAProxy admin socket timed out')));
    socket.on('connect', () => socket.end(`${command}\n`));
    socket.on('data', (d) => (out += d.toString('utf8')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

/** Each API/streaming server's state as HAProxy sees it (UP, DOWN, MAINT, ...), by server name. */
export async function haproxyServerStates(s: ClusterSettings): Promise<Map<string, string>> {
  const text = await haproxyCommand(s, 'show stat');
  const [header, ...rows] = text.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const sv = columns.indexOf('svname');
  const status = columns.indexOf('status');
  const states = new Map<string, string>();
  for (const row of rows) {
    const cells = row.split(',');
    if (cells[sv] && cells[sv] !== 'FRONTEND' && cells[sv] !== 'BACKEND') states.set(cells[sv], cells[status]);
  }
  return states;
}
