// Errors in Mastodon's format: `{"error": "..."}`, plus `details` for per-field validation errors
// and `error_description` on OAuth endpoints. Core operations and routes throw ApiError; the API's
// error handler (services/api/app.ts) renders it, and pipelines treat it as a permanent failure of
// the input. Anything else becomes a logged 500 without internals in the body.
export interface FieldError {
  error: string;
  description: string;
}

export class ApiError extends Error {
  readonly statusCode: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    statusCode: number,
    error: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(error);
    this.statusCode = statusCode;
    this.body = { error, ...extra };
    this.headers = headers;
  }
}

export const notFound = (): ApiError => new ApiError(404, 'Record not found');
export const forbidden = (message = 'This action is not allowed'): ApiError => new ApiError(403, message);
export const outsideScopes = (): ApiError => new ApiError(403, 'This action is outside the authorized scopes');
export const unauthorized = (message = 'The access token is invalid'): ApiError =>
  new ApiError(
    401,
    message,
    {},
    { 'www-authenticate': `Bearer realm="Doorkeeper", error="invalid_token", error_description="${message}"` },
  );
export const missingParam = (name: string): ApiError =>
  new ApiError(400, `param is missing or the value is empty: ${name}`);
export const badRequest = (message: string): ApiError => new ApiError(400, message);
export const tooManyRequests = (): ApiError => new ApiError(429, 'Too many requests');

/** 422 `Validation failed: ...`, optionally with Mastodon's per-field `details`. */
export function validationFailed(message: string, details?: Record<string, FieldError[]>): ApiError {
  return new ApiError(422, `Validation failed: ${message}`, details ? { details } : {});
}
