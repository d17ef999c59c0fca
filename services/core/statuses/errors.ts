// Failures of status operations: catalogue errors (services/core/errors.ts) that callers can also
// tell apart by kind (validation → 422 "Validation failed: ...", notFound → 404, forbidden → 403,
// unavailable → 503). `message` is the bare text; `body` is what the API answers.
import { DomainError } from '../errors.ts';

export type StatusErrorKind = 'validation' | 'notFound' | 'forbidden' | 'unavailable';

const STATUS: Record<StatusErrorKind, number> = { validation: 422, notFound: 404, forbidden: 403, unavailable: 503 };

export class StatusError extends DomainError {
  readonly kind: StatusErrorKind;
  constructor(kind: StatusErrorKind, message: string) {
    super(STATUS[kind], kind === 'validation' ? `Validation failed: ${message}` : message);
    this.message = message;
    this.kind = kind;
  }
}

export const statusValidation = (message: string): StatusError => new StatusError('validation', message);
export const statusNotFound = (message = 'Record not found'): StatusError => new StatusError('notFound', message);
export const statusForbidden = (message = 'This action is not allowed'): StatusError =>
  new StatusError('forbidden', message);
