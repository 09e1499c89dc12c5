/**
 * The entry of each worker process of `voxpipe serve --workers N`
 * (`serve-cluster.ts` forks it): one reference server on the shared port and
 * the shared PostgreSQL store, which tells the primary when it listens.
 */
import { classifyFailure, errorLine, processIo } from './io.js';
import { serve, type ListeningLine } from './serve.js';

const io = processIo();
let code: number;
try {
  const values = JSON.parse(process.env['VOXPIPE_SERVE_OPTIONS'] ?? '{}') as Parameters<typeof serve>[0];
  code = await serve({ ...values, workers: '1' }, io, process, {
    first: process.env['VOXPIPE_SERVE_FIRST'] === '1',
    listening: (line: ListeningLine) => process.send?.(line),
  });
} catch (err) {
  io.stderr.write(`${errorLine(err)}\n`);
  code = classifyFailure(err).exit;
}
process.exit(code);
