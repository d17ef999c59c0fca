// Tests are TypeScript with `.ts` import specifiers (the runtime uses Node's type stripping);
// @swc/jest compiles them to CommonJS for jest, which keeps the suite fast and mock-free.
const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];
// ESM-only packages the server imports (openid-client and its two dependencies) are compiled too.
const ESM_ONLY = ['openid-client', 'oauth4webapi', 'jose'];
const common = {
  transform: { '^.+\\.ts$': swc, [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: swc },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
};
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: [
        '<rootDir>/test/integration/**/*.test.ts',
        '<rootDir>/test/e2e/**/*.test.ts',
        '<rootDir>/test/federation/**/*.test.ts',
      ],
      globalSetup: '<rootDir>/test/support/globalSetup.ts',
      globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
    },
    // `npm run test:cluster` only: it starts the whole local cluster (test/cluster).
    ...(process.env.FEDISRV_CLUSTER_TEST === '1'
      ? [{ ...common, displayName: 'cluster', testMatch: ['<rootDir>/test/cluster/**/*.test.ts'] }]
      : []),
  ],
  // A global option: jest ignores testTimeout inside `projects`.
  testTimeout: 60000,
};
