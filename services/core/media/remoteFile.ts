// Downloading a remote server's media file (an attachment, an avatar, an emoji) to copy it here:
// through the SSRF-safe client, within a size limit, never from a server whose media is rejected.
import type { Core } from '../context.ts';
import { domainPolicy } from '../moderation/domainBlocks.ts';
import { FetchError, safeFetch } from '../activitypub/safeFetch.ts';
import { hostOf } from '../activitypub/uris.ts';

export interface RemoteFileRequest {
  maxBytes: number;
  timeoutMs: number;
  accept: string;
  /** Whose media policy applies; the URL's host by default. */
  domain?: string;
  /** What the log lines say it was (`remote emoji`) and the fields that name it. */
  what: string;
  logFields: Record<string, unknown>;
}

/** The file's bytes, or null (logged) when it is refused, unreachable or not answered with 200. */
export async function downloadRemoteFile(core: Core, url: string, req: RemoteFileRequest): Promise<Buffer | null> {
  const host = hostOf(url);
  if (host === null || (await domainPolicy(core, req.domain ?? host)).rejectMedia) return null;
  try {
    const res = await safeFetch(core.config, url, {
      maxBytes: req.maxBytes,
      timeoutMs: req.timeoutMs,
      headers: { accept: req.accept },
    });
    if (res.status === 200) return res.body;
    core.logger.info({ ...req.logFields, status: res.status }, `${req.what} not cached: origin answered`);
    return null;
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    core.logger.info({ ...req.logFields, reason: err.reason }, `${req.what} not cached`);
    return null;
  }
}
