// The upload is not acceptable media (wrong type, too big, unreadable, untranscodable): Mastodon's
// 422 `Validation failed: <message>`.
import { ValidationError } from '../errors.ts';

export class MediaRejectedError extends ValidationError {}
