/**
 * `voxpipe serve --workers N`: N server processes on one port (node:cluster;
 * the primary hands connections out in turn) and one PostgreSQL store, so they
 * answer as one service (`server/store/sql.ts`).
 *
 * The primary serves nothing itself. It prints the one `listening` line once
 * every worker listens, starts another worker when one dies (a request it
 * was generating is recovered by the others and resumes), and on SIGTERM or
 * SIGINT (or SIGHUP, or the command that started it gone) has each worker
 * drain, then exits. A worker that fails before the
 * server is ready (the port in use, the database unreachable) stops them all.
 */
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { ExitCode, note, STOP_CAUSES, type Io } from './io.js';
import { watchParent } from './parent-watch.js';
import type { ListeningLine } from './serve.js';

function isListeningLine(message: unknown): message is ListeningLine {
  return typeof message === 'object' && message !== null && (message as { event?: unknown }).event === 'listening';
}

export function serveCluster(workers: number, values: object, io: Io, signals: NodeJS.EventEmitter): Promise<number> {
  // The worker entry sits next to this module (dist/cli/serve-worker.js).
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./serve-worker.js', import.meta.url)), args: [] });
  const options = JSON.stringify(values);
  const listening = new Set<Worker>();
  let ready = false;
  let stopping = false;
  let failed = false;

  return new Promise<number>((resolve) => {
    const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    const finishIfDone = () => {
      if (live().length > 0) return;
      signals.off('SIGTERM', onTerm);
      signals.off('SIGINT', onInt);
      signals.off('SIGHUP', onHup);
      unwatch();
      resolve(failed ? ExitCode.error : ExitCode.ok);
    };
    const stopAll = () => {
      for (const w of live()) w.process.kill('SIGTERM');
      finishIfDone();
    };
    const fork = (first: boolean) => {
      const worker = cluster.fork({ VOXPIPE_SERVE_OPTIONS: options, VOXPIPE_SERVE_FIRST: first ? '1' : '0' });
      worker.on('message', (message: unknown) => {
        if (!isListeningLine(message)) return;
        listening.add(worker);
        if (ready || listening.size < workers) return;
        ready = true;
        note(io, `${workers} worker processes (pids ${live().map((w) => w.process.pid).join(', ')}) share the port and the store`);
        io.stdout.write(`${JSON.stringify(message)}\n`);
      });
      worker.on('exit', (code, signal) => {
        listening.delete(worker);
        if (stopping) return finishIfDone();
        if (!ready) {
          // It said why on standard error; without all of them there is no server.
          failed = true;
          stopping = true;
          return stopAll();
        }
        note(io, `worker ${worker.process.pid} stopped (${signal ?? `exit ${code}`}); starting another`);
        fork(false);
      });
    };
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      note(io, `${signal}: draining ${live().length} workers`);
      stopAll();
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    const onHup = () => stop('SIGHUP');
    signals.on('SIGTERM', onTerm);
    signals.on('SIGINT', onInt);
    signals.on('SIGHUP', onHup);
    // `npx voxpipe serve` stopped: npm's shell passes no signal on (parent-watch.ts).
    const unwatch = signals === process ? watchParent(io.env, (event) => stop(event === 'parent_gone' ? STOP_CAUSES.parent_gone.text : event)) : () => undefined;
    for (let i = 0; i < workers; i++) fork(i === 0);
  });
}
