/**
 * The local voxpipe service of one data directory (`daemon.ts` says why and
 * how commands find it): `node dist/cli/daemon-entry.js DIR`, started
 * detached by the first command, its standard error in `DIR/daemon.log`.
 *
 * It opens the directory's PGlite store (waiting while an older process
 * lets go of it), runs the reference server on a free loopback port with one
 * account whose key it makes, writes `DIR/daemon.json`, and serves until it
 * has had no command for its idle time (then it applies the retention and
 * exits), until it is told to retire, or SIGTERM.
 *
 * What it keeps on disk stays bounded: finished realtime requests and their
 * audio go once their resume window has passed (and the oldest first past
 * RESUME_AUDIO_MAX_BYTES), the write-ahead log is trimmed when it passes
 * WAL_MAX_BYTES, and every stop gives the log's space back.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { redact } from '../errors.js';
import type { PgliteStore } from '../server/store/pglite.js';
import type { RetentionWindows } from '../server/store/retention.js';
import { idleMsOf, removeState, RESUME_AUDIO_MAX_BYTES, resumeWindowMsOf, retentionMsOf, WAL_MAX_BYTES, writeState, type ControlReply, type DaemonState } from './daemon.js';

/** Retention runs at most this often while the daemon is up (and always when it stops). */
const PRUNE_EVERY_MS = 3_600_000; // 1 h
/** How often the size of the write-ahead log is looked at. */
const WAL_CHECK_EVERY_MS = 5_000; // 5 s
/** How long the daemon waits for an older process to let go of the store. */
const STORE_WAIT_MS = 60_000; // 60 s
/** A control request is one short JSON line. */
const MAX_LINE = 64 * 1024;

function log(text: string): void {
  process.stderr.write(`${new Date().toISOString()} ${redact(text)}\n`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function openStore(dir: string): Promise<PgliteStore> {
  const [{ PgliteStore }, { DataDirInUseError }] = await Promise.all([import('../server/store/pglite.js'), import('../server/store/lock.js')]);
  const deadline = Date.now() + STORE_WAIT_MS;
  for (;;) {
    try {
      return await PgliteStore.open(dir);
    } catch (err) {
      if (!(err instanceof DataDirInUseError) || Date.now() >= deadline) throw err;
      await sleep(100);
    }
  }
}

async function main(dir: string): Promise<void> {
  const env = process.env;
  const identity = env['VOXPIPE_DAEMON_IDENTITY'] ?? 'unknown';
  const idleMs = idleMsOf(env);
  const retentionMs = retentionMsOf(env);
  const resumeWindowMs = resumeWindowMsOf(env);
  const windows = (olderThanMs: number): RetentionWindows => ({ olderThanMs, resumeWindowMs });
  const key = `sk-daemon-${randomBytes(24).toString('hex')}`;
  const keyBytes = Buffer.from(key);

  const [{ createEngine }, { startServer, tasksIdle }, { pruneStore, resumeWindowPassed }, { overrideRealtimeTuning }] = await Promise.all([
    import('../server/engines/index.js'),
    import('../server/index.js'),
    import('../server/store/retention.js'),
    import('../server/realtime/index.js'),
  ]);
  // This process serves one user's commands: a finished request stays resumable for the window, its audio within the bound.
  overrideRealtimeTuning({ requestRetentionMs: resumeWindowMs, maxFinishedAudioBytes: RESUME_AUDIO_MAX_BYTES });
  // The engine starts in its worker while the store opens.
  const engine = createEngine((env['VOXPIPE_DAEMON_ENGINE'] as Parameters<typeof createEngine>[0] | undefined) ?? 'auto');
  const store = await openStore(dir).catch(async (err: unknown) => {
    await (await engine.catch(() => undefined))?.close();
    throw err;
  });
  const server = await startServer({
    store,
    engine,
    host: '127.0.0.1',
    port: 0,
    accounts: [{ apiKey: key, userId: 'local-dev' }],
    // It serves this user's commands only: local files and loopback URLs are fine as inputs.
    allowPrivateUrls: true,
    log: (where, error) => log(`${where}: ${env['VOXPIPE_DEBUG'] && error instanceof Error ? (error.stack ?? error.message) : error instanceof Error ? error.message : String(error)}`),
  }).catch(async (err: unknown) => {
    await store.close().catch(() => undefined);
    throw err;
  });

  const holds = new Set<Socket>();
  let lastActive = Date.now();
  let lastPrune = 0;
  let pruning: Promise<unknown> | undefined;
  let retiring = false;

  const prune = (olderThanMs: number, reclaim: boolean) => {
    const run = (pruning ?? Promise.resolve()).then(() => pruneStore(store, windows(olderThanMs), { reclaim }));
    pruning = run.catch(() => undefined);
    lastPrune = Date.now();
    return run;
  };

  const sockets = new Set<Socket>();
  const control = createServer((socket) => {
    sockets.add(socket);
    socket.setEncoding('utf8');
    let buffer = '';
    const reply = (r: ControlReply, end = true) => {
      if (end) socket.end(`${JSON.stringify(r)}\n`);
      else socket.write(`${JSON.stringify(r)}\n`);
    };
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      if (holds.delete(socket)) lastActive = Date.now();
    });
    const onData = (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_LINE) return void socket.destroy();
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      socket.off('data', onData);
      let request: { key?: unknown; op?: unknown; olderThanMs?: unknown };
      try {
        request = JSON.parse(buffer.slice(0, end)) as typeof request;
      } catch {
        return reply({ ok: false, reason: 'not JSON' });
      }
      const given = Buffer.from(typeof request.key === 'string' ? request.key : '');
      if (given.length !== keyBytes.length || !timingSafeEqual(given, keyBytes)) return reply({ ok: false, reason: 'key' });
      switch (request.op) {
        case 'hold':
          if (retiring) return reply({ ok: false, reason: 'retiring' });
          holds.add(socket);
          lastActive = Date.now();
          return reply({ ok: true }, false);
        case 'status':
          return reply({ ok: true, pid: process.pid, holds: holds.size, tasks: tasksIdle(server.ctx).active, idleMs, retentionMs, resumeWindowMs, lastPrune: lastPrune ? new Date(lastPrune).toISOString() : null, retiring });
        case 'prune': {
          const olderThanMs = typeof request.olderThanMs === 'number' && request.olderThanMs >= 0 ? request.olderThanMs : retentionMs;
          prune(olderThanMs, true).then(
            (result) => reply({ ok: true, ...result }),
            (err: unknown) => reply({ ok: false, reason: err instanceof Error ? err.message : String(err) }),
          );
          return;
        }
        case 'retire':
          reply({ ok: true });
          void retire('retire');
          return;
        default:
          return reply({ ok: false, reason: `unknown op ${String(request.op)}` });
      }
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    control.once('error', reject);
    control.listen({ host: '127.0.0.1', port: 0 }, resolve);
  });
  const address = control.address();
  if (address === null || typeof address === 'string') throw new Error('the control channel has no port');

  const state: DaemonState & { engine: string } = {
    pid: process.pid,
    identity,
    controlPort: address.port,
    baseUrl: server.baseUrl,
    rootUrl: server.rootUrl,
    wsUrl: server.wsUrl,
    rtHttpUrl: server.rtHttpUrl,
    key,
    startedAt: new Date().toISOString(),
    idleMs,
    retentionMs,
    resumeWindowMs,
    engine: server.ctx.engine.name,
  };
  await writeState(dir, state);
  log(`serving ${dir} at ${server.baseUrl} (engine ${server.ctx.engine.name}; stops after ${Math.round(idleMs / 1000)} s idle)`);

  let stopped: Promise<void> | undefined;
  /** Stop: no new commands; the ones running finish (a retire), then retention (idle), and the process exits. */
  const retire = (why: 'idle' | 'retire' | 'signal'): Promise<void> =>
    (stopped ??= (async () => {
      retiring = true;
      await removeState(dir, process.pid);
      log(`stopping (${why})`);
      if (why === 'retire') {
        while (holds.size > 0 || tasksIdle(server.ctx).active > 0) await sleep(50);
      }
      clearInterval(tick);
      if (why === 'idle') await prune(retentionMs, true).catch((err: unknown) => log(`retention: ${err instanceof Error ? err.message : String(err)}`));
      await pruning;
      control.close();
      for (const s of sockets) s.destroy();
      await server.drain();
      // The write-ahead log's space goes back at every stop, not only after a prune.
      await store.checkpoint().catch((err: unknown) => log(`checkpoint: ${err instanceof Error ? err.message : String(err)}`));
      await store.close();
      log('stopped');
    })().then(
      () => process.exit(0),
      (err: unknown) => {
        log(`failed while stopping: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    ));

  const busy = () => holds.size > 0 || tasksIdle(server.ctx).active > 0;
  let lastWalCheck = 0;
  let checkpointing = false;
  /** A long command writes the log faster than anything else: it is trimmed as it goes, not only when the service stops. */
  const boundWal = async () => {
    lastWalCheck = Date.now();
    if ((await store.walBytes()) > WAL_MAX_BYTES) await store.checkpoint();
  };
  const tick = setInterval(
    () => {
      if (retiring) return;
      if (!checkpointing && Date.now() - lastWalCheck >= WAL_CHECK_EVERY_MS) {
        checkpointing = true;
        void boundWal()
          .catch((err: unknown) => log(`checkpoint: ${err instanceof Error ? err.message : String(err)}`))
          .finally(() => (checkpointing = false));
      }
      if (busy()) {
        lastActive = Date.now();
        return;
      }
      if (Date.now() - lastActive >= idleMs) {
        void retire('idle');
        return;
      }
      if (pruning === undefined && (Date.now() - lastPrune >= PRUNE_EVERY_MS || resumeWindowPassed(store, resumeWindowMs))) {
        void prune(retentionMs, false)
          .catch((err: unknown) => log(`retention: ${err instanceof Error ? err.message : String(err)}`))
          .finally(() => (pruning = undefined));
      }
    },
    Math.max(50, Math.min(1_000, Math.floor(idleMs / 4))),
  );
  // The first retention runs once the first commands are done (a minute idle at most), not while they wait.
  lastPrune = Date.now() - PRUNE_EVERY_MS + Math.min(idleMs, 60_000);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void retire('signal'));
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node daemon-entry.js DATA_DIR (voxpipe starts it; see src/cli/daemon.ts)\n');
  process.exit(2);
}
main(dir).catch(async (err: unknown) => {
  log(`failed: ${err instanceof Error ? (process.env['VOXPIPE_DEBUG'] ? (err.stack ?? err.message) : err.message) : String(err)}`);
  await removeState(dir, process.pid).catch(() => undefined);
  process.exit(1);
});
