import { describe, expect, it } from '@jest/globals';
import {
  ApiError,
  DomainError,
  forbidden,
  notFound,
  unauthorized,
  unprocessable,
  validationFailed,
  ValidationError,
} from '../../../services/core/errors.ts';
import { StatusError, statusValidation } from '../../../services/core/statuses/errors.ts';
import { AccountValidationError } from '../../../services/core/accounts/create.ts';
import { RegistrationsClosedError } from '../../../services/core/accounts/registration.ts';
import { AnnouncementError } from '../../../services/core/announcements/announcements.ts';
import { DocumentUnavailable } from '../../../services/core/activitypub/documents.ts';
import { MediaRejectedError } from '../../../services/core/media/errors.ts';

describe('the error catalogue', () => {
  it('gives each entry a code, a status and Mastodon’s body', () => {
    expect([notFound().code, notFound().statusCode, notFound().body]).toEqual([
      'E_NOT_FOUND',
      404,
      { error: 'Record not found' },
    ]);
    expect(forbidden().body).toEqual({ error: 'This action is not allowed' });
    const v = validationFailed('Title can’t be blank', {
      title: [{ error: 'ERR_BLANK', description: 'can’t be blank' }],
    });
    expect([v.code, v.statusCode]).toEqual(['E_VALIDATION_FAILED', 422]);
    expect(v.body).toEqual({
      error: 'Validation failed: Title can’t be blank',
      details: { title: [{ error: 'ERR_BLANK', description: 'can’t be blank' }] },
    });
    expect(unprocessable('Account not found', { x: 1 }).body).toEqual({ error: 'Account not found', x: 1 });
    expect(unauthorized().headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('keeps the compatible ApiError: same class, code from the status', () => {
    const e = new ApiError(409, 'Conflict during update, please try again');
    expect(e).toBeInstanceOf(DomainError);
    expect(notFound()).toBeInstanceOf(ApiError);
    expect([e.code, e.statusCode, e.body]).toEqual([
      'E_CONFLICT',
      409,
      { error: 'Conflict during update, please try again' },
    ]);
    expect(new ApiError(418, 'teapot').code).toBe('E_HTTP_418');
  });

  it('renders the areas’ errors without a mapper, their message staying the bare text', () => {
    const s = statusValidation('Text can’t be blank');
    expect(s).toBeInstanceOf(StatusError);
    expect([s.statusCode, s.body, s.message]).toEqual([
      422,
      { error: 'Validation failed: Text can’t be blank' },
      'Text can’t be blank',
    ]);
    expect([
      new StatusError('notFound', 'Record not found').statusCode,
      new StatusError('unavailable', 'x').statusCode,
    ]).toEqual([404, 503]);
    const a = new AccountValidationError({ username: [{ error: 'ERR_TAKEN', description: 'is taken' }] });
    expect(a).toBeInstanceOf(ValidationError);
    expect(a.body).toEqual({
      error: 'Validation failed: Username is taken',
      details: { username: [{ error: 'ERR_TAKEN', description: 'is taken' }] },
    });
    expect([new RegistrationsClosedError().statusCode, new RegistrationsClosedError().body]).toEqual([
      403,
      { error: 'This action is not allowed' },
    ]);
    const missing = new AnnouncementError('No announcement 7', 404);
    expect([missing.statusCode, missing.body, missing.message]).toEqual([
      404,
      { error: 'Record not found' },
      'No announcement 7',
    ]);
    expect(new AnnouncementError('Text is too long').body).toEqual({ error: 'Validation failed: Text is too long' });
    expect(new DocumentUnavailable(404, 'gone away').body).toEqual({ error: 'Record not found' });
    expect(new DocumentUnavailable(403, 'This account is suspended').body).toEqual({
      error: 'This account is suspended',
    });
    expect(new MediaRejectedError('File is invalid').body).toEqual({ error: 'Validation failed: File is invalid' });
  });
});
