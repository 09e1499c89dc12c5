// The soak bench's server (not a bench itself): the reference server in this
// child process, so its RSS is its own, with a realtime fault armed at a
// steady rate. Prints its `listening` line, then one `{"rss":..,"fds":..}`
// line whenever it reads a line on standard input.
import { readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { startServer } from '../dist/server/index.js';

const [key, faultsPerMinute] = [process.argv[2], Number(process.argv[3] ?? 60)];
const server = await startServer({ engine: 'tone', accounts: [{ apiKey: key, userId: 'soak', credits: 1e12, apiQuota: 1e12 }] });
const kinds = [
  () => ({ realtimeClose: { afterAudioFrames: 2 + Math.floor(Math.random() * 6), code: Math.random() < 0.5 ? 1012 : 1013 } }),
  () => ({ realtimeDrop: { afterAudioFrames: 2 + Math.floor(Math.random() * 6) } }),
  () => ({ realtimeError: { afterAudioFrames: 2 + Math.floor(Math.random() * 6), code: 'provider_unavailable', retryable: true } }),
];
let armed = 0;
const timer = faultsPerMinute > 0 ? setInterval(() => {
  server.faults.set(kinds[armed++ % kinds.length]());
}, 60_000 / faultsPerMinute) : undefined;
process.stdout.write(`${JSON.stringify({ event: 'listening', baseUrl: server.baseUrl, rootUrl: server.rootUrl, wsUrl: server.wsUrl, rtHttpUrl: server.rtHttpUrl })}\n`);
createInterface({ input: process.stdin }).on('line', () => {
  process.stdout.write(`${JSON.stringify({ rss: process.memoryUsage().rss, fds: readdirSync('/proc/self/fd').length, faultsArmed: armed })}\n`);
});
process.on('SIGTERM', () => {
  clearInterval(timer);
  void server.close().then(() => process.exit(0));
});
