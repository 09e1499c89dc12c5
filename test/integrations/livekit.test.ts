/**
 * `voxpipe/livekit` with the real `@livekit/agents` and
 * `@livekit/rtc-node` packages against the reference server: streamed text in
 * any chunking gives the audio of the whole text, a close 1012 mid-segment is
 * invisible to the agent, close() stops frames at once, metrics carry
 * `ttfbMs`, timed transcripts give each segment's text with its start time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIError, initializeLogger, tts as lkTts, type metrics } from '@livekit/agents';
import { dispose } from '@livekit/rtc-node';
import type { ServiceConfig } from '../../src/config.js';
import { TTS } from '../../src/integrations/livekit.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream, type SpeechOptions } from '../../src/speech.js';
import { speakText } from '../helpers/speak.js';

const TEXT = 'Hello from the agent.  It speaks each sentence as it comes. And it keeps the spaces!';
let server: ReferenceServer;
let config: ServiceConfig;

beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'fatal' });
  server = await startServer({ engine: 'tone' });
  config = serviceConfigOf(server);
});
afterAll(async () => {
  await server.close();
  await dispose(); // rtc-node's FFI keeps the process alive otherwise
});

const direct = async (options: SpeechOptions): Promise<Buffer> => (await speakText(config, TEXT, options)).audio;

interface Collected {
  pcm: Buffer;
  frames: lkTts.SynthesizedAudio[];
  ended: boolean;
}

async function collect(stream: AsyncIterable<lkTts.SynthesizedAudio | typeof lkTts.SynthesizeStream.END_OF_STREAM>): Promise<Collected> {
  const frames: lkTts.SynthesizedAudio[] = [];
  let ended = false;
  for await (const item of stream) {
    if (item === lkTts.SynthesizeStream.END_OF_STREAM) {
      ended = true;
      break;
    }
    frames.push(item);
  }
  const pcm = Buffer.concat(frames.map((f) => Buffer.from(f.frame.data.buffer, f.frame.data.byteOffset, f.frame.data.byteLength)));
  return { pcm, frames, ended };
}

function chunked(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

describe('voxpipe/livekit: TTS.stream()', () => {
  for (const size of [1, 2, 4]) {
    it(`text in ${size}-character chunks gives the audio of the whole text, framed, with segment transcripts`, async () => {
      const tts = await TTS.create({ config, transport: 'realtime' });
      const stream = tts.stream();
      for (const piece of chunked(TEXT, size)) stream.pushText(piece);
      stream.endInput();
      const { pcm, frames, ended } = await collect(stream);
      expect(ended).toBe(true);
      expect(pcm.equals(await direct({ format: 'pcm', transport: 'realtime' }))).toBe(true);

      // Frames at the session's rate, 20 ms each but the last of a segment.
      const ready = await (await createSpeechStream(config, { transport: 'realtime' })).open();
      expect(tts.sampleRate).toBe(ready.sampleRate);
      expect(new Set(frames.map((f) => f.frame.sampleRate))).toEqual(new Set([ready.sampleRate]));
      const frameSamples = Math.round(ready.sampleRate / 50);
      for (const f of frames.filter((f) => !f.final)) expect(f.frame.samplesPerChannel).toBe(frameSamples);

      // One timed transcript per segment, on its first frame: its text with the spaces, its start time.
      const timed = frames.flatMap((f) => f.timedTranscripts ?? []);
      expect(timed.map((t) => t.text).join('')).toBe(TEXT);
      expect(timed.length).toBeGreaterThan(1);
      expect(timed[0]!.startTime).toBe(0);
      for (let i = 1; i < timed.length; i++) expect(timed[i]!.startTime!).toBeGreaterThan(timed[i - 1]!.startTime!);
      expect(frames.filter((f) => f.final)).toHaveLength(timed.length);
      await tts.close();
    });
  }

  it('wordTimings: one timed transcript per word on the segment\'s last frame, at the word gaps of the tone engine', async () => {
    const tts = await TTS.create({ config, transport: 'realtime', wordTimings: true });
    const stream = tts.stream();
    stream.pushText(TEXT);
    stream.endInput();
    const { frames } = await collect(stream);
    const timed = frames.flatMap((f) => f.timedTranscripts ?? []);
    // The words, spaces kept, join to the text; only final frames carry them.
    expect(timed.map((t) => t.text).join('')).toBe(TEXT);
    expect(timed.map((t) => t.text.trim())).toEqual(TEXT.trim().split(/\s+/));
    expect(frames.filter((f) => f.timedTranscripts).every((f) => f.final)).toBe(true);
    // The tone engine: 70 ms a letter, 40 ms between words of a clause. The
    // second word of the text starts 40 ms after the first ends.
    const [first, second] = timed;
    const letters = first!.text.replace(/\W/g, '').length;
    expect(first!.startTime!).toBeLessThan(0.015);
    expect(Math.abs(first!.endTime! - (letters * 70) / 1000)).toBeLessThan(0.015);
    expect(Math.abs(second!.startTime! - first!.endTime! - 0.04)).toBeLessThan(0.015);
    for (let i = 1; i < timed.length; i++) expect(timed[i]!.startTime!).toBeGreaterThanOrEqual(timed[i - 1]!.endTime! - 1e-9);
    expect(timed.every((t) => t.confidence! > 0 && t.confidence! <= 1)).toBe(true);
    await tts.close();
  });

  it('a close 1012 mid-segment is invisible to the agent: same frames, no error', async () => {
    const expected = await direct({ format: 'pcm', transport: 'realtime' });
    const tts = new TTS({ config, transport: 'realtime' });
    const errors: unknown[] = [];
    tts.on('error', (e) => errors.push(e));
    server.faults.set({ realtimeClose: { afterAudioFrames: 2, code: 1012 } });
    try {
      const stream = tts.stream();
      for (const piece of chunked(TEXT, 3)) stream.pushText(piece);
      stream.endInput();
      const { pcm, ended } = await collect(stream);
      expect(ended).toBe(true);
      expect(pcm.equals(expected)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      server.faults.clear();
    }
  });

  it('close() is a barge-in: the plugin puts no frame after it, and the iteration ends at once', async () => {
    const tts = new TTS({ config });
    const stream = tts.stream();
    // The framework's queue between the plugin and the agent: count what the plugin puts after close().
    const queue = (stream as unknown as { queue: { put(item: unknown): void } }).queue;
    const closed = { at: undefined as number | undefined };
    let putsAfterClose = 0;
    const put = queue.put.bind(queue);
    queue.put = (item) => {
      if (closed.at !== undefined) putsAfterClose += 1;
      put(item);
    };
    stream.pushText(TEXT);
    stream.endInput();
    const first = await stream.next();
    expect(first.done).toBe(false);
    stream.close();
    closed.at = performance.now();
    // What the framework had queued before close() may still drain; nothing new comes.
    const after = await collect(stream);
    await new Promise((r) => setTimeout(r, 200));
    expect(after.ended).toBe(false);
    expect(putsAfterClose).toBe(0);
    expect(after.frames.length).toBeLessThan(3);
  });

  it('flush speaks what is buffered; metrics carry ttfbMs', async () => {
    const tts = new TTS({ config });
    const collected: metrics.TTSMetrics[] = [];
    tts.on('metrics_collected', (m) => collected.push(m));
    const stream = tts.stream();
    stream.pushText('No sentence end here');
    stream.flush();
    const first = await stream.next();
    expect(first.done).toBe(false); // spoken before endInput: the flush cut it
    stream.pushText(' and more after.');
    stream.endInput();
    await collect(stream);
    await new Promise((r) => setTimeout(r, 50));
    expect(collected.length).toBeGreaterThan(0);
    expect(collected[0]!.ttfbMs).toBeGreaterThanOrEqual(0);
    expect(collected[0]!.streamed).toBe(true);
  });

  it('a wrong voice is a non-retryable APIError on the TTS error event, not a hang', async () => {
    const tts = new TTS({ config, voiceId: 'no-such-voice', transport: 'realtime' });
    const errors: { error: Error; recoverable: boolean }[] = [];
    tts.on('error', (e) => errors.push(e));
    const stream = tts.stream();
    stream.pushText(TEXT);
    stream.endInput();
    const { frames, ended } = await collect(stream);
    expect(frames).toHaveLength(0);
    expect(ended).toBe(false);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.error).toBeInstanceOf(APIError);
    expect((errors[0]!.error as APIError).retryable).toBe(false);
    expect(errors[0]!.error.message).toMatch(/voice_not_found/);
  });

  it('prewarm() opens a connection the next stream starts on', async () => {
    const tts = new TTS({ config, spare: 1 });
    await tts.prewarm();
    const stream = tts.stream();
    stream.pushText(TEXT);
    stream.endInput();
    const { pcm } = await collect(stream);
    expect(pcm.equals(await direct({ format: 'pcm', transport: 'realtime' }))).toBe(true);
    await tts.close();
  });
});

describe('voxpipe/livekit: TTS.synthesize()', () => {
  it('a ChunkedStream over the sync route: the same samples as the sync transport', async () => {
    const tts = new TTS({ config });
    const frame = await tts.synthesize(TEXT).collect();
    const pcm = Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength);
    expect(pcm.equals(await direct({ format: 'pcm', transport: 'sync' }))).toBe(true);
  });
});
