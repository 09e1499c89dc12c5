/**
 * The README's recipes run as written: each example is spawned
 * with nothing configured (the embedded reference server) in a scratch
 * directory, and must exit 0 having produced what it says.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseWavHeader } from '../../src/sinks/wav-header.js';
import { startFakeChatServer } from '../helpers/fake-chat-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

async function runExample(name: string, args: string[] = [], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; cwd: string }> {
  const cwd = await mkdtemp(join(tmpdir(), 'voxpipe-example-'));
  const tsx = pathToFileURL(join(root, 'node_modules/tsx/dist/esm/index.mjs')).href;
  const child = spawn(process.execPath, ['--import', tsx, join(root, 'examples', name), ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VOXPIPE_BASE_URL: '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stdout, stderr, cwd };
}

describe('examples', () => {
  it('ai-sdk.ts: streamText into experimental_streamSpeech writes a WAV of the spoken answer', async () => {
    const { code, stdout, stderr, cwd } = await runExample('ai-sdk.ts');
    try {
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/first audio after \d+ ms \(audio\/pcm, \d+ Hz\)/);
      const wav = await readFile(join(cwd, 'ai-sdk.wav'));
      const header = parseWavHeader(wav);
      expect(header?.dataBytes).toBeGreaterThan(10_000);
      expect(stdout).toContain(`wrote ai-sdk.wav: ${header?.dataBytes} bytes of PCM`);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('livekit.ts: the TTS plugin driven as AgentSession drives it writes a WAV, with transcripts and metrics', async () => {
    const { code, stdout, stderr, cwd } = await runExample('livekit.ts');
    try {
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/^at 0\.00 s: "Hi! /m);
      expect(stdout).toMatch(/metrics: ttfb \d+ ms/);
      const wav = await readFile(join(cwd, 'livekit.wav'));
      const header = parseWavHeader(wav);
      expect(header?.dataBytes).toBeGreaterThan(10_000);
      expect(stdout).toContain(`${header?.dataBytes} bytes at ${header?.pcm.sampleRate} Hz`);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('otel-console.ts: the console exporters print a resumed request as request > segment > attempt spans, and the metrics', async () => {
    const { code, stdout, stderr, cwd } = await runExample('otel-console.ts');
    try {
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/spoke \d+ segments, \d+ bytes, resumed 1 time\(s\)/);
      for (const name of ['voxpipe.request', 'voxpipe.segment', 'voxpipe.attempt']) expect(stdout).toContain(`name: '${name}'`);
      expect(stdout).toContain("'voxpipe.outcome': 'dropped'");
      expect(stdout).toContain("name: 'voxpipe.resume'");
      expect(stdout).toContain("name: 'voxpipe.client.time_to_first_audio'");
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  const ANSWER = 'Foxes are small wild canids. They live on every continent but Antarctica. Most hunt at dusk.';
  for (const name of ['openai-chat.ts', 'openai-agents.ts']) {
    it(`${name}: a streamed chat completion (a stand-in endpoint) spoken as it arrives`, async () => {
      const chat = await startFakeChatServer(ANSWER);
      const { code, stdout, stderr, cwd } = await runExample(name, ['Tell me about foxes.'], { OPENAI_BASE_URL: chat.baseUrl, OPENAI_API_KEY: 'sk-fake-openai' });
      try {
        expect(code, stderr).toBe(0);
        expect(chat.requests).toHaveLength(1);
        expect(chat.requests[0]).toMatchObject({ stream: true });
        expect(stdout).toMatch(/first audio \d+ ms after the first token/);
        const wav = await readFile(join(cwd, name.replace('.ts', '.wav')));
        const header = parseWavHeader(wav);
        const segments = Number(/(\d+) segments/.exec(stdout)?.[1]);
        expect(segments).toBeGreaterThanOrEqual(2); // cut at sentence ends as the text arrived, not spoken whole at the end
        expect(stdout).toContain(`${header?.dataBytes} bytes of speech`);
      } finally {
        await chat.close();
        await rm(cwd, { recursive: true, force: true });
      }
    });
  }

  it('phone-agent.ts: a call through the stand-in media-stream provider, barged in, then a reply played to the end', async () => {
    const { code, stdout, stderr, cwd } = await runExample('phone-agent.ts');
    try {
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/^call CA[0-9a-f]{32}: stream MZ[0-9a-f]{32}, mulaw at 8000 Hz$/m);
      const played = /^turn 1 interrupted after \d+ ms: (\d+) ms played of (\d+) ms sent$/m.exec(stdout);
      expect(played, stdout).not.toBeNull();
      expect(Number(played![1])).toBeGreaterThan(0);
      expect(Number(played![1])).toBeLessThan(Number(played![2]));
      const heard = JSON.parse(/^heard: (.*)$/m.exec(stdout)![1]!) as string;
      expect(heard.length).toBeGreaterThan(0);
      // A prefix of the greeting, cut at a word boundary.
      const greeting = 'Hello, thanks for calling the support line. I can help with orders, returns and delivery times.';
      expect(greeting.startsWith(heard), heard).toBe(true);
      expect(/\s/.test(greeting[heard.length] ?? ' ')).toBe(true);
      const turn2 = /^turn 2 completed: \d+ frames, (\d+)\/(\d+) marks acknowledged, heard "Sure, go ahead\. I am listening\."$/m.exec(stdout);
      expect(turn2, stdout).not.toBeNull();
      expect(turn2![1]).toBe(turn2![2]);
      expect(stdout).toMatch(/^provider: 1 clear, \d+ marks echoed on playback$/m);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('mastra-voice.ts: a MastraVoice whose speak() returns the audio while the text still streams', async () => {
    const { code, stdout, stderr, cwd } = await runExample('mastra-voice.ts');
    try {
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/speakers: [1-9]/);
      expect(stdout).toMatch(/audio stream returned after \d+ ms, text still streaming: true/);
      const header = parseWavHeader(await readFile(join(cwd, 'mastra.wav')));
      expect(header?.dataBytes).toBeGreaterThan(10_000);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
