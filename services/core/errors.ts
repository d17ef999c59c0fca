// The one catalogue of domain errors. Each entry has a stable code, the HTTP status it maps to and
// Mastodon's message; the body is Mastodon's format, `{"error": "..."}`, plus `details` for
// per-field validation errors and `error_description` on OAuth endpoints. Core throws these (or a
// subclass of DomainError for a failure callers also catch by class, such as StatusError); the
// API's one error handler (services/api/app.ts) and the pages' handler (services/web/index.ts)
// render any DomainError by its `statusCode` and `body`, so no area maps errors of its own.
// Pipelines treat a DomainError as a permanent failure of the input. Anything else becomes a
// logged 500 without internals in the body.
export interface FieldError {
  error: string;
  description: string;
}

/** Codes of the catalogue (`DomainError.code`), by the HTTP status a bare ApiError carries. */
export const ERROR_CODES = {
  400: 'E_BAD_REQUEST',
  401: 'E_UNAUTHORIZED',
  403: 'E_FORBIDDEN',
  404: 'E_NOT_FOUND',
  409: 'E_CONFLICT',
  410: 'E_GONE',
  422: 'E_UNPROCESSABLE',
  429: 'E_TOO_MANY_REQUESTS',
  503: 'E_UNAVAILABLE',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES] | `E_${string}`;

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;

  /**
   * `error` is the body's text (and the message); `code` defaults to the catalogue code of the
   * status. Prefer the catalogue's factories below over calling this directly.
   */
  constructor(
    statusCode: number,
    error: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
    code?: ErrorCode,
  ) {
    super(error);
    this.name = new.target.name;
    this.statusCode = statusCode;
    this.code = code ?? ERROR_CODES[statusCode as keyof typeof ERROR_CODES] ?? `E_HTTP_${statusCode}`;
    this.body = { error, ...extra };
    this.headers = headers;
  }
}

/**
 * Compatibility name of DomainError: `new ApiError(status, text)` still compiles and renders as
 * before. New code throws a catalogue entry (`notFound()`, `unprocessable(text)`, ...).
 * @deprecated use DomainError and the catalogue's factories.
 */
export const ApiError = DomainError;
export type ApiError = DomainError;

// ---- the catalogue ----

export const notFound = (message = 'Record not found'): DomainError => new DomainError(404, message);

/** The record a lookup found, or Mastodon's 404 when it found none. */
export function orNotFound<T>(record: T | null | undefined): T {
  if (record === null || record === undefined) throw notFound();
  return record;
}
export const gone = (message: string): DomainError => new DomainError(410, message);
export const forbidden = (message = 'This action is not allowed'): DomainError => new DomainError(403, message);
export const outsideScopes = (): DomainError =>
  new DomainError(403, 'This action is outside the authorized scopes', {}, {}, 'E_OUTSIDE_SCOPES');
export const unauthorized = (message = 'The access token is invalid'): DomainError =>
  new DomainError(
    401,
    message,
    {},
    {
      'www-authenticate': `Bearer realm="Doorkeeper", error="invalid_token", error_description="${message}"`,
    },
  );
export const missingParam = (name: string): DomainError =>
  new DomainError(400, `param is missing or the value is empty: ${name}`, {}, {}, 'E_PARAM_MISSING');
export const badRequest = (message: string): DomainError => new DomainError(400, message);
export const conflict = (message: string): DomainError => new DomainError(409, message);
export const tooManyRequests = (): DomainError => new DomainError(429, 'Too many requests');
export const unavailable = (
  message = 'There was a temporary problem serving your request, please try again',
): DomainError => new DomainError(503, message);

/** 422 `Validation failed: ...`, optionally with Mastodon's per-field `details`. */
export function validationFailed(message: string, details?: Record<string, FieldError[]>): DomainError {
  return new DomainError(422, `Validation failed: ${message}`, details ? { details } : {}, {}, 'E_VALIDATION_FAILED');
}

/**
 * A 422 `Validation failed: <message>` that callers also catch by class (a page shows the bare
 * message): the base of the areas' validation errors.
 */
export class ValidationError extends DomainError {
  constructor(message: string, details?: Record<string, FieldError[]>, code: ErrorCode = 'E_VALIDATION_FAILED') {
    super(422, `Validation failed: ${message}`, details ? { details } : {}, {}, code);
    this.message = message;
  }
}

/** 422 with Mastodon's text as is (the 422s that do not start with "Validation failed"). */
export const unprocessable = (message: string, extra: Record<string, unknown> = {}): DomainError =>
  new DomainError(422, message, extra);
