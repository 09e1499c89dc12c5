/**
 * `voxpipe/ai-sdk` driven by the real `ai` package against the
 * reference server: ai@7's `experimental_streamSpeech` fed by `streamText`
 * on a mock language model, and `experimental_generateSpeech` of ai@6 (as
 * the `ai6` alias) and ai@7.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { experimental_generateSpeech as generateSpeech7, experimental_streamSpeech as streamSpeech, streamText } from 'ai';
import { MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import { experimental_generateSpeech as generateSpeech6 } from 'ai6';
import type { ServiceConfig } from '../../src/config.js';
import { createVoxpipe } from '../../src/integrations/ai-sdk.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream, type SpeechOptions } from '../../src/speech.js';
import { speakText } from '../helpers/speak.js';

const TEXT = 'The model streams its answer. Each sentence is spoken as it arrives. Nothing is lost.';
let server: ReferenceServer;
let config: ServiceConfig;

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  config = serviceConfigOf(server);
});
afterAll(() => server.close());

const direct = async (options: SpeechOptions): Promise<Buffer> => (await speakText(config, TEXT, options)).audio;

/** A language model that streams `text` in `size`-character deltas. */
function mockLlm(text: string, size: number): MockLanguageModelV4 {
  const deltas: string[] = [];
  for (let i = 0; i < text.length; i += size) deltas.push(text.slice(i, i + size));
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream: simulateReadableStream({
        chunkDelayInMs: 1,
        chunks: [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          ...deltas.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
          { type: 'text-end', id: 't' },
          {
            type: 'finish',
            finishReason: { unified: 'stop', raw: 'stop' },
            usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: deltas.length, text: deltas.length, reasoning: 0 } },
          },
        ],
      }),
    }),
  });
}

function concat(parts: Uint8Array[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

describe('voxpipe/ai-sdk: ai@7 experimental_streamSpeech', () => {
  for (const size of [1, 4, 17]) {
    it(`streamText (${size}-character deltas) piped into streamSpeech gives the audio of the whole text, labelled audio/pcm with its rate`, async () => {
      const voxpipe = createVoxpipe({ config });
      const llm = streamText({ model: mockLlm(TEXT, size), prompt: 'speak' });
      const result = streamSpeech({ model: voxpipe.speech(), text: llm.textStream });
      const audio: Uint8Array[] = [];
      const formats = new Set<string>();
      for await (const part of result.fullStream) {
        if (part.type === 'error') throw part.error;
        if (part.type === 'audio') {
          audio.push(part.audio);
          formats.add(JSON.stringify(part.audioFormat));
        }
      }
      const expected = await direct({ format: 'pcm', transport: 'realtime' });
      expect(concat(audio).equals(expected)).toBe(true);
      const ready = await (await createSpeechStream(config, { transport: 'realtime' })).open();
      expect([...formats]).toEqual([JSON.stringify({ type: 'audio/pcm', rate: ready.sampleRate })]);
      const usage = await result.usage;
      expect(usage.inputCharacters).toBe(TEXT.length);
      expect((usage.raw as { units: number }).units).toBeGreaterThan(0);
      expect(await result.warnings).toEqual([]);
    });
  }

  it('speechV4(): the same model declared v4 streams the same audio', async () => {
    const voxpipe = createVoxpipe({ config });
    const result = streamSpeech({ model: voxpipe.speechV4(), text: TEXT });
    const audio: Uint8Array[] = [];
    for await (const chunk of result.audioStream) audio.push(chunk);
    expect(concat(audio).equals(await direct({ format: 'pcm', transport: 'realtime' }))).toBe(true);
    const { audio: wav } = await generateSpeech7({ model: voxpipe.speechV4(), text: TEXT });
    expect(wav.mediaType).toBe('audio/wav');
  });

  it('a close 1012 mid-segment is invisible: the audio stays byte-exact', async () => {
    const expected = await direct({ format: 'pcm', transport: 'realtime' });
    server.faults.set({ realtimeClose: { afterAudioFrames: 2, code: 1012 } });
    try {
      const voxpipe = createVoxpipe({ config });
      const result = streamSpeech({ model: voxpipe.speech(), text: streamText({ model: mockLlm(TEXT, 3), prompt: 'x' }).textStream });
      const audio: Uint8Array[] = [];
      for await (const chunk of result.audioStream) audio.push(chunk);
      expect(concat(audio).equals(expected)).toBe(true);
    } finally {
      server.faults.clear();
    }
  });

  it('abort is a barge-in: no audio part after it, and the stream ends', async () => {
    const voxpipe = createVoxpipe({ config });
    const controller = new AbortController();
    const result = streamSpeech({ model: voxpipe.speech(), text: TEXT, abortSignal: controller.signal, onError: () => undefined });
    let afterAbort = 0;
    let parts = 0;
    const consumed = (async () => {
      for await (const part of result.fullStream) {
        if (part.type !== 'audio') continue;
        parts += 1;
        if (controller.signal.aborted) afterAbort += 1;
        if (parts === 1) controller.abort(new Error('user spoke'));
      }
    })();
    await expect(consumed).rejects.toThrow(/user spoke/);
    expect(parts).toBe(1);
    expect(afterAbort).toBe(0);
    await expect(result.usage).rejects.toThrow(/user spoke/);
  });

  it('options the service does not take come back as SDK warnings; provider options reach the request', async () => {
    const voxpipe = createVoxpipe({ config });
    const result = streamSpeech({
      model: voxpipe.speech(),
      text: 'Hello there.',
      instructions: 'whisper',
      outputFormat: { type: 'audio/flac' },
      providerOptions: { voxpipe: { emotion: 'happy' } },
    });
    const audio: Uint8Array[] = [];
    for await (const chunk of result.audioStream) audio.push(chunk);
    expect(concat(audio).length).toBeGreaterThan(0);
    const features = (await result.warnings).map((w) => ('feature' in w ? w.feature : w.type));
    expect(features).toEqual(['outputFormat', 'instructions']);
  });

  it('a provider with spare connections prewarms them and streams on one', async () => {
    const voxpipe = createVoxpipe({ config, spare: 1 });
    try {
      await voxpipe.prewarm();
      const result = streamSpeech({ model: voxpipe.speech(), text: TEXT });
      const audio: Uint8Array[] = [];
      for await (const chunk of result.audioStream) audio.push(chunk);
      expect(concat(audio).equals(await direct({ format: 'pcm', transport: 'realtime' }))).toBe(true);
    } finally {
      voxpipe.close();
    }
  });
});

describe('voxpipe/ai-sdk: generateSpeech (sync route)', () => {
  it('ai@6: WAV by default, labelled audio/wav, the same samples as the sync transport', async () => {
    const voxpipe = createVoxpipe({ config });
    const { audio, warnings, providerMetadata } = await generateSpeech6({ model: voxpipe.speech(), text: TEXT });
    expect(audio.mediaType).toBe('audio/wav');
    expect(Buffer.from(audio.uint8Array).equals(await direct({ format: 'wav', transport: 'sync' }))).toBe(true);
    expect(warnings).toEqual([]);
    expect((providerMetadata['voxpipe'] as { units: number }).units).toBeGreaterThan(0);
  });

  it('ai@7: pcm when asked, labelled audio/pcm (not mp3)', async () => {
    const voxpipe = createVoxpipe({ config });
    const { audio } = await generateSpeech7({ model: voxpipe.speech(), text: TEXT, outputFormat: 'pcm' });
    expect(audio.mediaType).toBe('audio/pcm');
    expect(Buffer.from(audio.uint8Array).equals(await direct({ format: 'pcm', transport: 'sync' }))).toBe(true);
  });

  it('ai@7: mp3 when asked, labelled audio/mpeg', async () => {
    const voxpipe = createVoxpipe({ config });
    const { audio } = await generateSpeech7({ model: voxpipe.speech(), text: 'Short.', outputFormat: 'mp3' });
    expect(audio.mediaType).toBe('audio/mpeg');
  });

  it('a service error is the typed voxpipe error, code and all', async () => {
    const voxpipe = createVoxpipe({ config });
    await expect(generateSpeech6({ model: voxpipe.speech(), text: TEXT, voice: 'no-such-voice', maxRetries: 0 })).rejects.toMatchObject({ name: 'BadRequestError', status: 400, message: /no-such-voice/ });
  });

  it('no service configured is a typed error naming what to pass', async () => {
    const saved = process.env['VOXPIPE_BASE_URL'];
    delete process.env['VOXPIPE_BASE_URL'];
    try {
      await expect(createVoxpipe({}).speech().doGenerate({ text: 'x' })).rejects.toMatchObject({ code: 'invalid_config', message: /pass \{ apiKey, baseUrl \}/ });
    } finally {
      if (saved !== undefined) process.env['VOXPIPE_BASE_URL'] = saved;
    }
  });
});
