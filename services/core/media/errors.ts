// Media errors surface as Mastodon's 422 `Validation failed: ...`.
import { validationFailed, type ApiError } from '../../api/errors.ts';

/** The upload is not acceptable media (wrong type, too big, unreadable). */
export class MediaRejectedError extends Error {}

export function mediaValidationFailed(message: string): ApiError {
  return validationFailed(message);
}
