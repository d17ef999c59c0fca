// Guard for npm scripts: the project runs on the Node 24 that `npm ci` installs (node_modules/.bin/node,
// which npm scripts put first on PATH). Plain JavaScript so that an older Node can run it and say so.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `This project needs Node 24 (found ${process.version}). Run it through npm after \`npm ci\` (which installs ` +
      'Node 24 into node_modules/.bin), and do not use --ignore-scripts.',
  );
  process.exit(1);
}
