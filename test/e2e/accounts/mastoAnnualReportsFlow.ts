// Annual reports as the masto client library uses them (masto.js's own annual-reports spec), run
// as its own Node process (masto is an ES module). Prints one JSON line.
// Usage: node mastoAnnualReportsFlow.ts <baseUrl> <token>
import { createRestAPIClient } from 'masto';

const [url, token] = process.argv.slice(2) as [string, string];
const alice = createRestAPIClient({ url, accessToken: token });
const listed = await alice.v1.annualReports.list();
const state = await alice.v1.annualReports.$select('2026').state.fetch();
await alice.v1.annualReports.$select('2026').generate();
console.log(JSON.stringify({ listed: listed.annualReports, state: state.state }));
