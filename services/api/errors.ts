// The API renders core's Mastodon-format errors; routes import them from here.
export * from '../core/errors.ts';
