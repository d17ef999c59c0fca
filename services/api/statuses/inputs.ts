// Parameters the status routes share, normalised as Mastodon reads them (422 with its wording).
import type { Static } from '@sinclair/typebox';
import { VISIBILITIES, type Visibility } from '../../core/model/statuses.ts';
import type { PollInput } from '../../core/statuses/attachments.ts';
import { isQuotePolicySetting, type QuotePolicySetting } from '../../core/quotes/policy.ts';
import { ApiError, validationFailed } from '../errors.ts';
import { parseFlag, type PollBody } from './schemas.ts';

export function visibilityOf(value: string | null | undefined): Visibility | null {
  if (value === undefined || value === null || value === '') return null;
  if (!(VISIBILITIES as readonly string[]).includes(value))
    throw validationFailed('Visibility is not included in the list');
  return value as Visibility;
}

export function pollOf(body: Static<typeof PollBody> | null | undefined): PollInput | null {
  if (!body) return null;
  // The polls module validates and normalises (422 with Mastodon's wording).
  return {
    options: body.options as string[],
    expiresIn: body.expires_in as number,
    multiple: parseFlag(body.multiple) ?? false,
    hideTotals: parseFlag(body.hide_totals) ?? false,
  };
}

/** `quote_approval_policy`: null when not given; Mastodon answers anything else than its three with 422. */
export function quotePolicyOf(value: string | null | undefined): QuotePolicySetting | null {
  if (value === undefined || value === null || value === '') return null;
  if (!isQuotePolicySetting(value)) throw new ApiError(422, 'Record invalid');
  return value;
}
