/**
 * `voxpipe data [show|prune|stop] [--older-than DURATION] [--json]`: the
 * embedded default's data directory.
 * - show: where it is, its size on disk (the database, its write-ahead log),
 *   what is kept how long and the bound, and the local service that serves
 *   it, if one runs;
 * - prune: delete what is past the retention (or --older-than: 0 for every
 *   finished thing) and give the space back, write-ahead log included (see
 *   server/store/retention.ts);
 * - stop: stop the local service now (it stops by itself when idle).
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from './args.js';
import { jsonOption, Option, type CliCommand } from './command.js';
import { ExitCode, note, type Io } from './io.js';
import { dataDirOf } from './service.js';

interface Options {
  olderThan?: string;
  json?: boolean;
}

const ACTIONS = ['show', 'prune', 'stop'] as const;

export const command: CliCommand<Options> = {
  name: 'data',
  summary: "the embedded server's data directory: show its size and local service, prune past the retention, stop the service",
  examples: [
    "voxpipe data",
    "voxpipe data prune --older-than 1h",
    "voxpipe data stop",
  ],
  declare(cmd) {
    cmd
      .argument('[ACTION]', `show (default), prune or stop`)
      .addOption(new Option('--older-than <DURATION>', 'prune: what ended longer ago than this (90s, 10m, 24h, 0 for all); default VOXPIPE_DATA_RETENTION, else 24h; realtime requests and their audio go after VOXPIPE_RESUME_WINDOW (10m) if shorter'))
      .addOption(jsonOption());
  },
  run: (args, values, io) => run(args[0] ?? 'show', values, io),
};

/** Bytes under `path` (files only; a missing path is 0). */
export async function diskBytes(path: string): Promise<number> {
  let info;
  try {
    info = await stat(path);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const entry of await readdir(path).catch(() => [] as string[])) total += await diskBytes(join(path, entry));
  return total;
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;

/** A duration as people say it: 90 s, 10 min, 24 h. */
function spoken(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
}

async function run(action: string, values: Options, io: Io): Promise<number> {
  if (!(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`data takes ${ACTIONS.join(', ')}, got ${JSON.stringify(action)}`);
  const dir = dataDirOf(io.env);
  if (dir === undefined) throw new UsageError('no data directory: --ephemeral (or VOXPIPE_EPHEMERAL) keeps nothing, and with no HOME set VOXPIPE_DATA_DIR names one');
  const daemon = await import('./daemon.js');
  const print = (json: unknown, human: string[]) => {
    if (values.json) io.stdout.write(`${JSON.stringify(json)}\n`);
    else for (const line of human) note(io, line);
  };

  if (action === 'stop') {
    if (values.olderThan !== undefined) throw new UsageError('--older-than is for data prune');
    const pid = await daemon.stopDaemon(dir);
    print({ dataDir: dir, stopped: pid ?? null }, [pid === undefined ? `no local service runs for ${dir}` : `stopped the local service (process ${pid})`]);
    return ExitCode.ok;
  }

  if (action === 'show') {
    if (values.olderThan !== undefined) throw new UsageError('--older-than is for data prune');
    const [total, database, wal, log] = await Promise.all([diskBytes(dir), diskBytes(join(dir, 'pg')), diskBytes(join(dir, 'pg', 'pg_wal')), diskBytes(join(dir, daemon.LOG_FILE))]);
    const state = await daemon.readState(dir);
    let service: Record<string, unknown> | null = null;
    if (state && daemon.alive(state.pid)) {
      const status = await daemon.control(state, 'status', {}, false, 5_000).catch(() => undefined);
      service = { pid: state.pid, startedAt: state.startedAt, idleMs: state.idleMs, retentionMs: state.retentionMs, commands: status?.reply['holds'] ?? null, jobs: status?.reply['tasks'] ?? null, lastPrune: status?.reply['lastPrune'] ?? null };
    }
    const kept = { resumeWindowMs: daemon.resumeWindowMsOf(io.env), retentionMs: daemon.retentionMsOf(io.env), resumeAudioMaxBytes: daemon.RESUME_AUDIO_MAX_BYTES, walMaxBytes: daemon.WAL_MAX_BYTES };
    print({ dataDir: dir, bytes: total, databaseBytes: database, walBytes: wal, logBytes: log, kept, service }, [
      `${dir}: ${mb(total)} (database ${mb(database)}, of which write-ahead log ${mb(wal)})`,
      `kept: audio to resume a request ${spoken(kept.resumeWindowMs)} after it ends (at most ${mb(kept.resumeAudioMaxBytes)}, about 4/3 of that on disk); job results and audio files ${spoken(kept.retentionMs)}; write-ahead log trimmed past ${mb(kept.walMaxBytes)}`,
      service
        ? `local service: process ${state!.pid}, up since ${state!.startedAt}, stops after ${spoken(state!.idleMs)} idle and gives the space back`
        : 'local service: not running (the next command starts it)',
    ]);
    return ExitCode.ok;
  }

  // prune
  const olderThanMs = values.olderThan === undefined ? daemon.retentionMsOf(io.env) : parseOlderThan(values.olderThan, daemon.parseDuration);
  const before = await diskBytes(dir);
  let result: Record<string, unknown>;
  if (daemon.daemonEnabled(io.env)) {
    const lease = await daemon.connectDaemon(dir, { env: io.env });
    try {
      const { reply } = await daemon.control(lease.state, 'prune', { olderThanMs }, false, 600_000);
      if (!reply.ok) throw new daemon.DaemonError(`prune failed: ${String(reply.reason)}`);
      result = reply;
    } finally {
      lease.release();
    }
  } else {
    // No daemon: this process opens the store (one process at a time).
    const [{ PgliteStore }, { pruneStore }] = await Promise.all([import('../server/store/pglite.js'), import('../server/store/retention.js')]);
    const store = await PgliteStore.open(dir);
    try {
      result = { ...(await pruneStore(store, { olderThanMs, resumeWindowMs: daemon.resumeWindowMsOf(io.env) }, { reclaim: true })) };
    } finally {
      await store.close();
    }
  }
  const after = await diskBytes(dir);
  const deleted = (result['deleted'] ?? {}) as Record<string, number>;
  const total = Number(result['total'] ?? 0);
  print({ dataDir: dir, olderThanMs, deleted, total, bytesBefore: before, bytesAfter: after }, [
    `pruned ${total} record${total === 1 ? '' : 's'} older than ${Math.round(olderThanMs / 1000)} s${total ? ` (${Object.entries(deleted).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}; ${dir}: ${mb(before)} -> ${mb(after)}`,
  ]);
  return ExitCode.ok;
}

function parseOlderThan(text: string, parse: (text: string, name: string) => number): number {
  try {
    return parse(text, '--older-than');
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
