/**
 * One budget per deployment, against the real reference server with a cap on
 * an account's concurrent generations (`maxConcurrentGenerations`): many
 * streams behind one key all complete, the server never runs more than its
 * cap, the 429s stay about one per stream at most (no storm), a 429's
 * Retry-After holds every request of the deployment at once, a bounded wait
 * ends in `queue_timeout`, and every ending gives the slot back (a resume
 * keeps it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { deploymentBudget } from '../../src/budget.js';
import type { ServiceConfig } from '../../src/config.js';
import { QueueTimeoutError, RateLimitError } from '../../src/errors.js';
import { createClient } from '../../src/http/index.js';
import { startServer, type ReferenceServer, type ServerOptions } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream, type SpeechOptions } from '../../src/speech.js';
import type { SpeechStream } from '../../src/stream/speech-stream.js';

const servers: ReferenceServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function deployment(options: ServerOptions): Promise<{ server: ReferenceServer; config: ServiceConfig }> {
  const server = await startServer({ engine: 'tone', ...options });
  servers.push(server);
  return { server, config: serviceConfigOf(server) };
}

/** Speak `text` to the end; resolves with the audio's length. */
async function speak(config: ServiceConfig, text: string, options: SpeechOptions = {}): Promise<number> {
  const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime', ...options });
  speech.end(text);
  let bytes = 0;
  for await (const chunk of speech) bytes += (chunk as Buffer).length;
  return bytes;
}

/** A stream that holds its generation (and so a slot) until `end()`. */
async function holding(config: ServiceConfig, options: SpeechOptions = {}): Promise<{ speech: SpeechStream; done: Promise<number> }> {
  const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime', ...options });
  speech.write('Hold the line. ');
  const done = (async () => {
    let bytes = 0;
    for await (const chunk of speech) bytes += (chunk as Buffer).length;
    return bytes;
  })();
  await speech.open();
  return { speech, done };
}

describe('40 streams behind one key against a deployment capped at 5', () => {
  it('the client not told the cap: all complete, never more than 5 at the server, about one 429 per stream at most', async () => {
    const { server, config } = await deployment({ maxConcurrentGenerations: 5 });
    const sizes = await Promise.all(Array.from({ length: 40 }, (_, i) => speak(config, `Stream number ${i} says a sentence. And then one more.`)));
    expect(sizes.every((n) => n > 0)).toBe(true);
    const stats = server.concurrency.stats();
    expect(stats.peak).toBeLessThanOrEqual(5);
    expect(stats.admitted).toBe(40);
    // The first wave is refused once (35 of 40); a probe above the learnt cap costs one more now and then.
    expect(stats.refused).toBeLessThanOrEqual(40);
    expect(deploymentBudget(config.baseUrl, config.apiKey).stats()).toMatchObject({ running: 0, queued: 0, limit: 5 });
  }, 60_000);

  it('the client told the cap: all complete with no 429 at all', async () => {
    const { server, config } = await deployment({ maxConcurrentGenerations: 5 });
    const sizes = await Promise.all(Array.from({ length: 40 }, (_, i) => speak(config, `Stream number ${i} says a sentence.`, { maxConcurrency: 5 })));
    expect(sizes.every((n) => n > 0)).toBe(true);
    expect(server.concurrency.stats()).toMatchObject({ refused: 0, admitted: 40 });
    expect(server.concurrency.stats().peak).toBeLessThanOrEqual(5);
  }, 60_000);
});

describe("a 429's Retry-After", () => {
  it('holds every request of the deployment at once, also those never refused', async () => {
    const { server, config } = await deployment({ maxConcurrentGenerations: 1 });
    const held = await holding(config);
    const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl });
    const other = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl });
    let otherMs: Promise<number> | undefined;
    let refusedAt = 0;
    const synthesized = client.tts.synthesize({
      text: 'Refused first, then spoken.',
      voiceId: (await held.speech.open()).voiceId,
      format: 'pcm',
      onRetry: ({ error }) => {
        expect(error).toBeInstanceOf(RateLimitError);
        refusedAt = performance.now();
        // A request that was never refused, sent right after the refusal: it waits the same Retry-After.
        otherMs = other.usage.get().then(() => performance.now() - refusedAt);
        held.speech.end();
      },
    });
    const result = await synthesized;
    expect(result.audio.length).toBeGreaterThan(0);
    expect(refusedAt).toBeGreaterThan(0);
    // Retry-After: 1 s from the reference server; timers may fire a little early.
    expect(await otherMs).toBeGreaterThanOrEqual(950);
    await held.done;
    expect(server.concurrency.stats().refused).toBe(1);
  }, 30_000);
});

describe('the wait for a slot', () => {
  it('ends past queueTimeoutMs in a typed queue_timeout, and the waiting writer is called back', async () => {
    const { config } = await deployment({});
    const held = await holding(config, { maxConcurrency: 1 });
    const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime', maxConcurrency: 1, queueTimeoutMs: 200 });
    const failed = new Promise<unknown>((resolve) => speech.once('error', resolve));
    let calledBack = false;
    speech.write('Waiting in line. ', () => (calledBack = true));
    // Backpressure: while the stream waits for a slot, its writer waits with it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calledBack).toBe(false);
    const err = await failed;
    expect(err).toBeInstanceOf(QueueTimeoutError);
    expect(err).toMatchObject({ code: 'queue_timeout' });
    held.speech.end();
    await held.done;
    expect(deploymentBudget(config.baseUrl, config.apiKey).stats()).toMatchObject({ running: 0, queued: 0 });
  }, 30_000);
});

describe('HTTP creations', () => {
  it('share the realtime streams\' slots: a sync synthesis waits for one, or ends in queue_timeout', async () => {
    const { server, config } = await deployment({});
    const held = await holding(config, { maxConcurrency: 1 });
    const voiceId = (await held.speech.open()).voiceId;
    const client = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, maxConcurrency: 1, queueTimeoutMs: 200 });
    const err = await client.tts.synthesize({ text: 'Too late.', voiceId, format: 'pcm' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueTimeoutError);
    expect(server.concurrency.stats().admitted).toBe(1);
    // Unbounded, it runs once the stream ended.
    const waiting = createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, queueTimeoutMs: 10_000 }).tts.synthesize({ text: 'In turn.', voiceId, format: 'pcm' });
    held.speech.end();
    expect((await waiting).audio.length).toBeGreaterThan(0);
    await held.done;
    expect(deploymentBudget(config.baseUrl, config.apiKey).stats()).toMatchObject({ running: 0, queued: 0, peak: 1 });
  }, 30_000);
});

describe('a slot is held for the life of a generation and given back once', () => {
  it('on completion, error and abort: nothing leaks, the next stream gets the slot', async () => {
    const { config } = await deployment({});
    const budget = deploymentBudget(config.baseUrl, config.apiKey);
    // Error: a voice the deployment does not have.
    const bad = await createSpeechStream(config, { format: 'pcm', transport: 'realtime', maxConcurrency: 1, voiceId: '00000000-0000-4000-8000-000000000000' });
    bad.end('No such voice.');
    await expect(new Promise((resolve, reject) => bad.on('error', reject).on('end', resolve).resume())).rejects.toBeTruthy();
    expect(budget.stats().running).toBe(0);
    // Abort: mid-generation.
    const controller = new AbortController();
    const aborted = await holding(config, { maxConcurrency: 1, signal: controller.signal });
    expect(budget.stats().running).toBe(1);
    aborted.speech.on('error', () => undefined);
    controller.abort();
    await aborted.done.catch(() => undefined);
    expect(budget.stats().running).toBe(0);
    // Interrupt (barge-in), then destroy.
    const interrupted = await holding(config, { maxConcurrency: 1 });
    await interrupted.speech.interrupt();
    await interrupted.done.catch(() => undefined);
    expect(budget.stats().running).toBe(0);
    const destroyed = await holding(config, { maxConcurrency: 1 });
    destroyed.speech.on('error', () => undefined);
    destroyed.speech.destroy(new Error('gone'));
    await destroyed.done.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(budget.stats().running).toBe(0);
    // And the slot is there for the next one.
    expect(await speak(config, 'The slot is free.', { maxConcurrency: 1 })).toBeGreaterThan(0);
    expect(budget.stats()).toMatchObject({ running: 0, queued: 0, peak: 1 });
  }, 30_000);

  it('a close 1013 (overload) holds every connection of the deployment for the backoff, not only the one closed', async () => {
    const { config } = await deployment({ faults: { realtimeClose: { afterAudioFrames: 2, code: 1013, times: 1 } } });
    const budget = deploymentBudget(config.baseUrl, config.apiKey);
    const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime' });
    const closedFor: number[] = [];
    speech.on('retry', ({ delayMs }) => closedFor.push(budget.closedForMs(), delayMs));
    speech.end('A sentence long enough to be cut off. And another one after it, to resume.');
    for await (const _chunk of speech);
    expect(closedFor).toHaveLength(2);
    expect(closedFor[0]).toBeGreaterThan(0);
    expect(closedFor[0]).toBeLessThanOrEqual(closedFor[1]!);
  }, 30_000);

  it('a resume reconnects on the same slot: no second slot, none left behind', async () => {
    const { config } = await deployment({ faults: { realtimeClose: { afterAudioFrames: 2, code: 1012, times: 1 } } });
    const budget = deploymentBudget(config.baseUrl, config.apiKey);
    const speech = await createSpeechStream(config, { format: 'pcm', transport: 'realtime', maxConcurrency: 1 });
    speech.end('A sentence long enough to be cut off. And another one after it, to resume.');
    let bytes = 0;
    for await (const chunk of speech) bytes += (chunk as Buffer).length;
    expect(bytes).toBeGreaterThan(0);
    expect(speech.summary().resumed).toBeGreaterThanOrEqual(1);
    expect(budget.stats()).toMatchObject({ running: 0, queued: 0, peak: 1 });
  }, 30_000);
});
