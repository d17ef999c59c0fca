// Failures of status operations, independent of HTTP; the API maps them to Mastodon's answers
// (validation → 422 "Validation failed: ...", notFound → 404, forbidden → 403).
export type StatusErrorKind = 'validation' | 'notFound' | 'forbidden' | 'unavailable';

export class StatusError extends Error {
  readonly kind: StatusErrorKind;
  constructor(kind: StatusErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

export const statusValidation = (message: string): StatusError => new StatusError('validation', message);
export const statusNotFound = (message = 'Record not found'): StatusError => new StatusError('notFound', message);
export const statusForbidden = (message = 'This action is not allowed'): StatusError =>
  new StatusError('forbidden', message);
