/**
 * Ctrl-C mid-`speak` stops speaking, leaves a WAV whose header
 * sizes match the data written, prints one note and exits 130. Runs the real
 * binary as a child process on the embedded default.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/voxpipe.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'voxpipe-sigint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('SIGINT during speak', () => {
  it('patches the WAV header to the data written, one note, exit 130', async () => {
    const out = join(dir, 'cut.wav');
    const env = { ...process.env, VOXPIPE_BASE_URL: '', VOXPIPE_API_KEY: '' };
    const child = spawn(process.execPath, [BIN, 'speak', '--engine', 'tone', '--format', 'pcm', '--out', out], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Standard input stays open: the request is still running when Ctrl-C comes.
    child.stdin.write('The first sentence is spoken right away. ');
    await until(() => {
      try {
        return statSync(out).size > 44 + 4_800;
      } catch {
        return false;
      }
    }, 20_000);
    child.kill('SIGINT');
    const code = await exited;
    expect(code).toBe(130);
    expect(stdout).toBe('');
    const lines = stderr.trim().split('\n').filter((l) => !l.includes('tone engine'));
    expect(lines).toHaveLength(1);
    const kept = lines[0]!.match(/^voxpipe: interrupted; kept .*cut\.wav \((\d+) bytes; ([\d.]+) s of audio; \d+ bytes of pcm received\)$/);
    expect(kept).not.toBeNull();
    const wav = readFileSync(out);
    // The note says what the file holds.
    expect(Number(kept![1])).toBe(wav.length);
    expect(Number(kept![2])).toBeCloseTo((wav.length - 44) / 48_000, 1);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    const dataBytes = wav.readUInt32LE(40);
    expect(dataBytes).not.toBe(0xffffffff);
    expect(44 + dataBytes + (dataBytes % 2)).toBe(wav.length);
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
  });
});
