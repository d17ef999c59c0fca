// Sending one Web Push message: RFC 8291 encryption (aes128gcm) and RFC 8292 VAPID headers from the
// `web-push` package, the HTTP request itself made here so the connection goes through the address
// policy (no private or loopback endpoints unless ALLOWED_PRIVATE_ADDRESSES allows them), with a
// timeout and a bounded answer. What the push service answered decides what happens next:
// 2xx delivered; 404/410 the subscription is gone (delete it); 429/5xx or a network failure try
// again later (PushRetryError); any other answer is a permanent refusal of this message.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import webpush from 'web-push';
import type { Core } from '../context.ts';
import { AddressPolicy } from '../net/addressPolicy.ts';
import type { PushSubscriptionDoc } from '../model/pushSubscriptions.ts';

/** Mastodon keeps undelivered pushes for 48 hours (Web::PushNotificationWorker::TTL). */
export const PUSH_TTL_SECONDS = 48 * 3600;
const TIMEOUT_MS = 10_000;

export type PushOutcome = 'delivered' | 'gone' | 'rejected' | 'refused';

export class PushRetryError extends Error {
  readonly statusCode: number | null;
  constructor(message: string, statusCode: number | null) {
    super(message);
    this.statusCode = statusCode;
  }
}

export function vapidSubject(core: Core): string {
  if (core.config.localHttps) return core.config.baseUrl;
  const address = /<([^>]+)>/.exec(core.config.smtp.fromAddress)?.[1] ?? core.config.smtp.fromAddress;
  return `mailto:${address}`;
}

const policies = new WeakMap<Core, AddressPolicy>();
function addressPolicy(core: Core): AddressPolicy {
  let p = policies.get(core);
  if (!p) {
    p = new AddressPolicy(core.config.federation.allowedPrivateAddresses);
    policies.set(core, p);
  }
  return p;
}

export async function sendWebPush(
  core: Core,
  sub: Pick<PushSubscriptionDoc, 'endpoint' | 'keyP256dh' | 'keyAuth'>,
  payload: string,
  opts: { urgency?: 'very-low' | 'low' | 'normal' | 'high'; topic?: string } = {},
): Promise<PushOutcome> {
  const details = webpush.generateRequestDetails(
    { endpoint: sub.endpoint, keys: { p256dh: sub.keyP256dh, auth: sub.keyAuth } },
    payload,
    {
      contentEncoding: 'aes128gcm',
      TTL: PUSH_TTL_SECONDS,
      urgency: opts.urgency ?? 'normal',
      ...(opts.topic ? { topic: opts.topic } : {}),
      vapidDetails: { subject: vapidSubject(core), publicKey: core.vapid.publicKey, privateKey: core.vapid.privateKey },
    },
  );
  const url = new URL(details.endpoint);
  const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
  if (!transport) return 'rejected';
  // Node skips `lookup` for IP literals: check those here.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) && !addressPolicy(core).permits(literal)) return 'refused';
  const status = await new Promise<number | 'refused'>((resolve, reject) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: details.headers as http.OutgoingHttpHeaders,
        lookup: addressPolicy(core).lookup,
        timeout: TIMEOUT_MS,
      },
      (res) => {
        // Read (and drop) at most 64 KB of the answer, then let the socket go.
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > 65_536) res.destroy();
        });
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('close', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new PushRetryError('push service timed out', null)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EREFUSEDADDRESS') resolve('refused');
      else reject(err instanceof PushRetryError ? err : new PushRetryError(`push failed: ${err.message}`, null));
    });
    req.end(details.body);
  });
  if (status === 'refused') return 'refused';
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 404 || status === 410) return 'gone';
  if (status === 429 || status >= 500) throw new PushRetryError(`push service answered ${status}`, status);
  return 'rejected';
}
