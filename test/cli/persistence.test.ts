/**
 * The CLI's embedded default keeps its state between
 * commands. Each step here is its own `voxpipe` process with nothing
 * configured but a home (XDG_DATA_HOME), as a new user runs them.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/voxpipe.js', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-persist-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One CLI process: no VOXPIPE_* at all (so no VOXPIPE_EPHEMERAL from the test run), a home of its own. */
function voxpipe(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A short idle time: the local service this starts stops soon after the test (and is stopped at its end).
      env: { PATH: process.env['PATH'] ?? '', HOME: dir, XDG_DATA_HOME: join(dir, 'data'), VOXPIPE_DAEMON_IDLE: '20s' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(...args: string[]): Promise<Run> {
  const run = await voxpipe(...args);
  expect(run.stderr).not.toMatch(/error/);
  expect(run.code).toBe(0);
  return run;
}

const json = <T>(run: Run): T => JSON.parse(run.stdout) as T;

describe('the embedded default keeps state between commands', () => {
  it('clone -> say, jobs create -> jobs download, design create -> save -> say, usage: each a separate process', async () => {
    const dataDir = join(dir, 'data', 'voxpipe');
    // A reference recording (more than 10 s of speech), made with --ephemeral: that keeps nothing.
    await ok('say', 'This is reference audio for a cloned voice. It is read slowly and clearly, with enough words to last more than ten seconds, so the service accepts it as a sample of one speaker. A second paragraph makes sure of that on every engine: a clone takes ten seconds to five minutes of speech.', '--out', 'ref.wav', '--ephemeral');
    expect(existsSync(dataDir)).toBe(false);

    const clone = await ok('voices', 'clone', 'Me', 'ref.wav', '--json');
    expect(clone.stderr).toContain(`keeps voices, jobs and usage in ${dataDir}`);
    const { voiceId } = json<{ voiceId: string }>(clone);
    const mine = await ok('say', 'Hello in my own voice.', '--voice', voiceId, '--out', 'mine.wav', '--json');
    expect(json<{ bytes: number }>(mine).bytes).toBeGreaterThan(1000);
    expect(mine.stderr).not.toContain('keeps voices'); // the first-run note is said once
    // The same voice id means nothing to a server that keeps nothing.
    const forgotten = await voxpipe('say', 'Hello.', '--voice', voiceId, '--out', 'x.wav', '--ephemeral');
    expect(forgotten.code).toBe(1);
    expect(forgotten.stderr).toMatch(/voice_not_found/);

    const created = await ok('jobs', 'create', 'A job made by one command and fetched by the next.', '--json');
    const { taskId } = json<{ taskId: string }>(created);
    await ok('jobs', 'download', taskId, '--out', 'job.mp3');
    const mp3 = await readFile(join(dir, 'job.mp3'));
    expect(mp3.length).toBeGreaterThan(1000);
    expect(mp3.subarray(0, 3).toString('latin1') === 'ID3' || (mp3[0] === 0xff && (mp3[1]! & 0xe0) === 0xe0)).toBe(true);

    const design = json<{ designId: string; candidates: { candidateId: string }[] }>(await ok('design', 'create', 'a calm low voice', '--json'));
    const saved = json<{ voiceId: string }>(await ok('design', 'save', design.designId, design.candidates[0]!.candidateId, '--name', 'Calm', '--json'));
    await ok('say', 'Hello from a designed voice.', '--voice', saved.voiceId, '--out', 'designed.wav');

    const usage = json<{ ledger: { refId: string; state: string }[] }>(await ok('usage', '--limit', '100', '--json'));
    const refs = usage.ledger.map((e) => e.refId);
    expect(refs).toContain(`voice-clone:${voiceId}`);
    expect(refs).toContain(`job:${taskId}`);
    expect(usage.ledger.find((e) => e.refId === `job:${taskId}`)!.state).toBe('committed');
    // The local service kept the directory between commands; stopped, it lets go of it.
    await ok('data', 'stop');
    expect(existsSync(join(dataDir, 'daemon.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'voxpipe.lock'))).toBe(false);
  }, 180_000);
});
