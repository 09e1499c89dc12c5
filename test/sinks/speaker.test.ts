import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { UnavailableError } from '../../src/errors.js';
import { createSpeakerSink, openSpeaker, probeSpeaker } from '../../src/sinks/speaker.js';
import { chunksOf, sinePcm } from './audio-fixtures.js';

const MONO_24K = { sampleRate: 24_000, channels: 1, bitDepth: 16 };
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const FAKE = fixture('fake-speaker.cjs');
const ABORTING = fixture('aborting-speaker.cjs');

interface FakeSpeakerInstance {
  options: Record<string, unknown>;
  chunks: Buffer[];
  closedWith: boolean | undefined;
}
const FakeSpeaker = createRequire(import.meta.url)(FAKE) as { instances: FakeSpeakerInstance[] };

let speakerInstalled = true;
try {
  createRequire(import.meta.url).resolve('speaker');
} catch {
  speakerInstalled = false;
}
const noSoundCard = process.platform === 'linux' && !existsSync('/dev/snd');

describe('speaker probe', () => {
  it.runIf(speakerInstalled && noSoundCard)('reports the real speaker unavailable here, as a typed error, without crashing', async () => {
    const probe = await probeSpeaker({ refresh: true });
    expect(probe.available).toBe(false);
    expect(probe.reason).toMatch(/opening the audio device (crashed|failed)/);
    const error: unknown = await openSpeaker(MONO_24K).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).code).toBe('unavailable');
  });

  it('turns a backend that kills its process into an UnavailableError', async () => {
    const probe = await probeSpeaker({ module: ABORTING, refresh: true });
    expect(probe).toEqual({ available: false, reason: 'opening the audio device crashed (SIGKILL)' });
    await expect(openSpeaker(MONO_24K, { module: ABORTING })).rejects.toBeInstanceOf(UnavailableError);
  });

  it('says when the module is not installed', async () => {
    const probe = await probeSpeaker({ module: 'voxpipe-no-such-speaker-module', refresh: true });
    expect(probe.reason).toMatch(/not installed/);
  });

  it('refuses to open in-process without a positive probe', () => {
    expect(() => createSpeakerSink(MONO_24K, { module: ABORTING })).toThrow(UnavailableError);
  });
});

describe('SpeakerSink over a working backend', () => {
  it('opens with the PCM layout, passes every byte, and closes the device at the end', async () => {
    const sink = await openSpeaker(MONO_24K, { module: FAKE, refresh: true });
    const pcm = sinePcm(24_000, 200);
    for (const chunk of chunksOf(pcm, 1000)) sink.write(chunk);
    sink.end();
    const result = await sink.done;
    const device = FakeSpeaker.instances.at(-1);
    expect(device?.options).toMatchObject({ channels: 1, bitDepth: 16, sampleRate: 24_000 });
    expect(Buffer.concat(device?.chunks ?? []).equals(pcm)).toBe(true);
    expect(device?.closedWith).toBe(false); // closed by its own finish, playing out what it had
    expect(result).toMatchObject({ kind: 'speaker', bytesIn: pcm.length, pcm: MONO_24K });
  });

  it('drops queued audio when destroyed with an error', async () => {
    const sink = await openSpeaker(MONO_24K, { module: FAKE });
    sink.write(Buffer.alloc(100));
    sink.destroy(new Error('barge-in'));
    await expect(sink.done).rejects.toThrow('barge-in');
    expect(FakeSpeaker.instances.at(-1)?.closedWith).toBe(true);
  });
});
