// Moved to test/support/mediaFiles.ts; this re-export serves the files under test/e2e/clients
// written meanwhile. Import from test/support.
export * from '../../support/mediaFiles.ts';
