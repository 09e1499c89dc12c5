/**
 * Regression, found by the soak bench (bench/soak.mjs): finished realtime
 * requests, with the audio kept for their manifests, were never forgotten,
 * so the reference server's RSS grew with every request (269 -> 415 MiB in
 * 30 s at 50 concurrent streams). Now a finished request is kept for
 * `requestRetentionMs` after it finished (default 10 min) and the stored
 * audio of all finished requests together is bounded
 * (`maxFinishedAudioBytes`, default 256 MiB), oldest forgotten first.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { overrideRealtimeTuning } from '../../../src/server/realtime/index.js';
import { startServer, type ReferenceServer } from '../../../src/server/index.js';
import { serviceConfigOf } from '../../../src/service.js';
import { speakText } from '../../helpers/speak.js';

let server: ReferenceServer;
let restore: (() => void) | undefined;
beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
});
afterAll(() => server.close());
afterEach(() => {
  restore?.();
  restore = undefined;
});

async function speak(text: string): Promise<{ requestId: string; bytes: number }> {
  const { audio, summary } = await speakText(serviceConfigOf(server), text, { format: 'pcm', transport: 'realtime' });
  return { requestId: summary.requestId, bytes: audio.length };
}

async function statusOf(requestId: string): Promise<number> {
  const res = await fetch(`${server.rtHttpUrl}/v2/tts/requests/${requestId}`, { headers: { authorization: `Bearer ${serviceConfigOf(server).apiKey}` } });
  await res.body?.cancel();
  return res.status;
}

const kept = () => server.ctx.store.collection('realtime-requests').size;

describe('finished realtime requests are not kept forever', () => {
  it('the stored audio of finished requests is bounded: the oldest are forgotten first', async () => {
    const first = await speak('The first request of many.');
    restore = overrideRealtimeTuning({ maxFinishedAudioBytes: first.bytes * 3 });
    const later: string[] = [];
    for (let i = 0; i < 10; i++) later.push((await speak(`Request number ${i} of many.`)).requestId);
    expect(kept()).toBeLessThanOrEqual(4);
    expect(await statusOf(first.requestId)).toBe(404);
    expect(await statusOf(later.at(-1)!)).toBe(200);
  });

  it('a finished request is forgotten once its retention has passed', async () => {
    restore = overrideRealtimeTuning({ requestRetentionMs: 100 });
    const old = await speak('An old request.');
    expect(await statusOf(old.requestId)).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const fresh = await speak('A fresh request sweeps the old one away.');
    expect(await statusOf(old.requestId)).toBe(404);
    expect(await statusOf(fresh.requestId)).toBe(200);
  });
});
