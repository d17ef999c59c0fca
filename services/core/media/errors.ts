// The upload is not acceptable media (wrong type, too big, unreadable, untranscodable). Callers
// turn it into Mastodon's 422 `Validation failed: <message>`.
export class MediaRejectedError extends Error {}
