/**
 * Hostile frames (random bytes, a 2 MiB frame, deep nesting, unknown fields,
 * prototype keys) get an error event or a close, never a crash, and the
 * server keeps serving a request running on another connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/constants.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { seededRandom } from '../../protocol/frames.js';
import { flush, KEY_A, openClient, REQUEST, sendText, speakSegment, startReliable, startTestServer, stop } from './fixtures.js';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A map nested `depth` levels deep: { a: { a: { ... } } }. */
function nestedMap(depth: number): Uint8Array {
  const key = [0xa1, 0x61]; // "a"
  const bytes: number[] = [0x82, 0xa5, ...Buffer.from('event'), 0xa4, ...Buffer.from('ping')];
  bytes.push(...key);
  for (let i = 1; i < depth; i++) bytes.push(0x81, ...key);
  bytes.push(0xc0);
  return Uint8Array.from(bytes);
}

describe('hostile frames', () => {
  it('answers each hostile frame with an error or a close while another request streams', async () => {
    const victim = await openClient(server);
    await startReliable(victim, 'hostile-victim');
    await sendText(victim, 'I keep talking while someone misbehaves. '.repeat(10));
    flush(victim, 'v1');
    await victim.next('audio');

    const attacker = await openClient(server);
    const random = seededRandom(7);
    for (let i = 0; i < 50; i++) {
      const junk = Uint8Array.from({ length: 1 + Math.floor(random() * 200) }, () => Math.floor(random() * 256));
      attacker.sendRaw(junk);
    }
    attacker.sendRaw(nestedMap(200));
    attacker.send({ event: 'ping', event_id: 'x', __unknown: true });
    attacker.send({ event: 'start', request: { ...REQUEST, constructor: { prototype: { polluted: true } } } });
    // Every frame got an answer, and none crashed the connection.
    for (let i = 0; i < 52; i++) await attacker.next('error');
    const errors = attacker.all('error');
    expect(errors.every((e) => e.terminal === false)).toBe(true);
    expect(new Set(errors.map((e) => e.code))).toEqual(new Set([ErrorCode.invalidMessagepack, ErrorCode.invalidMessage, ErrorCode.unsupportedParameter]));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    attacker.send({ event: 'ping', event_id: 'still-here' });
    await attacker.next('pong');

    // A frame over the 1 MiB limit: ws refuses it with close 1009 before buffering it.
    attacker.sendRaw(new Uint8Array(2 * 1024 * 1024));
    expect((await attacker.closed).code).toBe(1009);

    // The victim's request went on untouched.
    await victim.next('segment_completed');
    await speakSegment(victim, 'v2', 'Still here.');
    expect(await stop(victim)).toMatchObject({ reason: 'completed' });
    expect(victim.badFrames).toEqual([]);

    // And new connections are served.
    const late = await RealtimeTestClient.connect(server.wsUrl, { apiKey: KEY_A });
    await late.next('authenticated');
    late.ws.terminate();
  });

  it('closes an unauthenticated connection on its first hostile frame', async () => {
    const c = await RealtimeTestClient.connect(server.wsUrl, {});
    c.sendRaw(Uint8Array.of(0xde, 0xff, 0xff));
    expect(await c.next('error')).toMatchObject({ terminal: true });
    expect((await c.closed).code).toBe(1008);
  });
});
