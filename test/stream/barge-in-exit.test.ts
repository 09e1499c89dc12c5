/**
 * After a barge-in with a slow (real-time) reader, `interrupt()`
 * and `service.close()` release everything at once: `examples/barge-in.ts`
 * exits right after printing its report (a paused socket that never reads
 * the server's close frame would keep `ws` waiting 30 s for it).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('barge-in example', () => {
  it('exits within 1 s of its report', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/barge-in.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VOXPIPE_BASE_URL: '' } });
    let reportAt: number | undefined;
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (reportAt === undefined && stdout.includes('spoken characters:')) reportAt = performance.now();
    });
    child.stderr.resume();
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    const exitAt = performance.now();
    expect(code).toBe(0);
    expect(reportAt).toBeDefined();
    expect(exitAt - reportAt!).toBeLessThan(1_000);
  });
});
