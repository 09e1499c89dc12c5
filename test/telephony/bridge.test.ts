/**
 * The media-stream bridge against a stand-in provider
 * (test/helpers/media-stream-peer.ts, written from the published Media
 * Streams protocol) and the real reference server on port 0: the audio the
 * provider gets is byte-exact to an independent G.711 encoding of the same
 * PCM, marks are echoed only when playback reaches them, and barge-in sends
 * `clear` and reports the text heard to the last acknowledged mark.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { serviceConfigOf } from '../../src/service.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { createSpeechStream } from '../../src/speech.js';
import { MediaStreamBridge, type SpeakResult } from '../../src/telephony/bridge.js';
import { resample } from '../../src/telephony/resample.js';
import { VoxpipeError } from '../../src/errors.js';
import { referenceEncode, referenceMulawDecode } from '../helpers/g711-reference.js';
import { connectMediaStreamPeer, type MediaStreamPeer, type PeerOptions } from '../helpers/media-stream-peer.js';
import { speakText } from '../helpers/speak.js';

const FRAME = 160;
const SHORT = 'Thanks for calling. Your order shipped today. It should arrive on Friday.';
const LONG =
  'Let me read your account details. Your plan renews on the first of every month. ' +
  'The last payment was received on time. You have two devices on the account. ' +
  'Both of them are eligible for an upgrade this year. Would you like to hear the offers?';

let server: ReferenceServer;
let wss: WebSocketServer;
let url: string;
const accepted: Promise<MediaStreamBridge>[] = [];

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/media`;
  wss.on('connection', (ws) => {
    const p = MediaStreamBridge.accept(ws);
    p.catch(() => undefined);
    accepted.push(p);
  });
});

afterAll(async () => {
  for (const c of wss.clients) c.terminate();
  await new Promise((r) => wss.close(r));
  await server.close();
});

async function call(options: PeerOptions = {}): Promise<{ peer: MediaStreamPeer; bridge: MediaStreamBridge }> {
  const before = accepted.length;
  const peer = await connectMediaStreamPeer(url, options);
  while (accepted.length <= before) await new Promise((r) => setTimeout(r, 5));
  return { peer, bridge: await accepted[before]! };
}

/** Play everything the app sends, as it arrives, until `done` settles. */
async function playThrough(peer: MediaStreamPeer, done: Promise<SpeakResult>): Promise<SpeakResult> {
  let settled = false;
  void done.then(() => (settled = true));
  while (!settled) {
    const seen = peer.received.length;
    peer.advance(1_000_000);
    await Promise.race([done, peer.until(() => peer.received.length > seen, 'more from the app')]);
  }
  return done;
}

/** A socket the test drives by hand: what the bridge sends is recorded, what it receives is delivered at once. */
class FakeSocket {
  readyState = 1;
  readonly sent: Record<string, unknown>[] = [];
  onSend: ((m: Record<string, unknown>) => void) | undefined;
  readonly #message: ((data: Buffer, isBinary: boolean) => void)[] = [];
  readonly #close: (() => void)[] = [];
  send(data: string): void {
    const m = JSON.parse(data) as Record<string, unknown>;
    this.sent.push(m);
    this.onSend?.(m);
  }
  close(): void {
    this.readyState = 3;
    for (const l of this.#close) l();
  }
  on(event: 'message' | 'close', listener: (...args: never[]) => void): this {
    if (event === 'message') this.#message.push(listener as (data: Buffer, isBinary: boolean) => void);
    else this.#close.push(listener as () => void);
    return this;
  }
  deliver(message: Record<string, unknown>): void {
    for (const l of this.#message) l(Buffer.from(JSON.stringify(message)), false);
  }
}

function pcmOf(buf: Buffer): Int16Array {
  const out = new Int16Array(buf.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = buf.readInt16LE(i * 2);
  return out;
}

describe('MediaStreamBridge', () => {
  for (const law of ['mulaw', 'alaw'] as const) {
    it(`sends the speech as 20 ms ${law} frames, byte-exact to an independent encoding of the same PCM, and ends when the last mark is echoed`, async () => {
      const { peer, bridge } = await call({ encoding: law === 'mulaw' ? 'audio/x-mulaw' : 'audio/x-alaw' });
      expect(bridge.law).toBe(law);
      expect(bridge.streamSid).toBe(peer.streamSid);
      expect(bridge.callSid).toBe(peer.callSid);
      const speech = await createSpeechStream(serviceConfigOf(server), { format: 'pcm' });
      const done = bridge.speak(speech);
      speech.end(SHORT);
      const result = await playThrough(peer, done);

      // The same text spoken straight to PCM (the tone engine is deterministic),
      // resampled to 8 kHz and encoded by the reference coder, padded to whole frames with silence.
      const { audio, summary } = await speakText(serviceConfigOf(server), SHORT, { format: 'pcm' });
      const pcm8k = resample(pcmOf(audio), summary.ready!.sampleRate, 8000);
      const expected = referenceEncode(pcm8k, law);
      const padded = Buffer.alloc(Math.ceil(expected.length / FRAME) * FRAME, law === 'mulaw' ? 0xff : 0xd5);
      expected.copy(padded);
      expect(peer.receivedAudio().equals(padded)).toBe(true);

      const media = peer.received.filter((m) => m.event === 'media');
      expect(media.every((m) => Buffer.from((m.media as { payload: string }).payload, 'base64').length === FRAME)).toBe(true);
      expect(result.frames).toBe(media.length);

      // Marks: every one echoed on playback, never before the audio sent ahead of it had played.
      const sentBefore = new Map<string, number>();
      let bytes = 0;
      for (const m of peer.received) {
        if (m.event === 'media') bytes += FRAME;
        if (m.event === 'mark') sentBefore.set((m.mark as { name: string }).name, bytes);
      }
      expect(sentBefore.size).toBe(result.marksSent);
      expect(result.marksSent).toBeGreaterThanOrEqual(Math.floor(media.length / 10));
      expect(peer.echoedOnPlayback.map((e) => e.name)).toEqual([...sentBefore.keys()]);
      for (const e of peer.echoedOnPlayback) expect(e.playedBytes).toBeGreaterThanOrEqual(sentBefore.get(e.name)!);
      expect(result.marksAcknowledged).toBe(result.marksSent);

      expect(result.outcome).toBe('completed');
      expect(result.heard.heardText.trim()).toBe(SHORT);
      expect(result.heard.segments.length).toBeGreaterThanOrEqual(2);
      expect(result.heard.segments.every((s) => s.complete)).toBe(true);
      expect(result.heard.playedMs).toBe(media.length * 20);
      await peer.stop();
    });
  }

  it('barge-in: caller audio comes out as PCM, the bridge sends clear, sends nothing after it, and reports the text heard to the last acknowledged mark', async () => {
    const { peer, bridge } = await call();
    const speech = await createSpeechStream(serviceConfigOf(server), { format: 'pcm' });
    const done = bridge.speak(speech);
    speech.end(LONG);
    // The provider has buffered 3 s of speech; 1.2 s of it has played.
    await peer.until(() => peer.queuedBytes() >= 150 * FRAME, '3 s of audio');
    expect(peer.advance(60)).toBe(60);
    const acked = peer.echoedOnPlayback.length;
    expect(acked).toBeGreaterThanOrEqual(6);
    const marks: string[] = [];
    bridge.on('mark', (name) => marks.push(name));
    await new Promise<void>((resolve) => {
      const check = () => (marks.length >= acked ? resolve() : setTimeout(check, 5));
      check();
    });

    // The caller speaks: a simple energy detector in the agent barges in.
    const heardAudio: Int16Array[] = [];
    const interrupted = new Promise<Awaited<ReturnType<MediaStreamBridge['bargeIn']>>>((resolve) => {
      bridge.on('audio', (pcm) => {
        heardAudio.push(pcm);
        const energy = Math.sqrt(pcm.reduce((n, v) => n + v * v, 0) / pcm.length);
        if (energy > 1000 && heardAudio.length === 1) resolve(bridge.bargeIn());
      });
    });
    const voice = Int16Array.from({ length: 1600 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 8000)));
    const sentCaller = peer.sendCallerAudio(voice);
    const heard = (await interrupted)!;
    const result = await done;
    await peer.until(() => peer.clears.length === 1, 'clear');

    // Caller audio: the bridge decoded what the provider sent.
    await new Promise<void>((resolve) => {
      const check = () => (heardAudio.length === 10 ? resolve() : setTimeout(check, 5));
      check();
    });
    const decoded = Int16Array.from(heardAudio.flatMap((a) => [...a]));
    expect([...decoded]).toEqual(Array.from(sentCaller, referenceMulawDecode));

    // Clear came with 1.2 s played, and dropped the rest; nothing after it.
    expect(peer.clears[0]!.playedBytes).toBe(60 * FRAME);
    expect(peer.clears[0]!.droppedBytes).toBeGreaterThan(0);
    const clearAt = peer.received.findIndex((m) => m.event === 'clear');
    expect(peer.received.slice(clearAt + 1)).toEqual([]);
    // The provider returned the marks still pending on clear: they do not count as heard.
    expect(peer.echoedOnClear.length).toBeGreaterThan(0);
    expect(heard.playedMs).toBe(1200);
    expect(heard.sentMs).toBeGreaterThan(1200);

    expect(result.outcome).toBe('interrupted');
    expect(result.heard).toEqual(heard);
    // Heard, then not heard, is the whole text; the cut is at a word boundary.
    expect(heard.heardText + heard.unheardText).toBe(LONG);
    expect(heard.heardText.length).toBeGreaterThan(0);
    expect(heard.heardText.length).toBeLessThan(LONG.length / 2);
    expect(LONG.startsWith(heard.heardText)).toBe(true);
    expect(/[\s]|^$/.test(LONG[heard.heardText.length] ?? '')).toBe(true);
    const complete = heard.segments.filter((s) => s.complete);
    expect(heard.heardText.startsWith(complete.map((s) => s.text).join(''))).toBe(true);
    // To the word: the tone engine says "Let me read your" in 1030 ms and
    // "account" ends at 1560 ms, so 1.2 s played is heard to "your", at a
    // word gap found in the segment's audio.
    expect(heard.heardText).toBe('Let me read your');
    const cut = heard.segments.find((s) => !s.complete && s.heardChars > 0)!;
    expect(cut.confidence).toBeGreaterThanOrEqual(0.8);
    expect(heard.segments.filter((s) => s.complete || s.heardChars === 0).every((s) => s.confidence === 1)).toBe(true);
    await peer.stop();
  });

  it('marks the provider returns on clear are not counted as heard (a socket that returns them at once)', async () => {
    // A provider that returns its pending marks the instant `clear` arrives,
    // before the bridge has stopped the speech stream: the heard position
    // must stay at the last mark echoed by playback.
    const socket = new FakeSocket();
    const accepting = MediaStreamBridge.accept(socket);
    socket.deliver({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    socket.deliver({ event: 'start', sequenceNumber: '1', streamSid: 'MZfake', start: { streamSid: 'MZfake', callSid: 'CAfake', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } });
    const bridge = await accepting;
    const speech = await createSpeechStream(serviceConfigOf(server), { format: 'pcm' });
    const done = bridge.speak(speech);
    speech.end(LONG);
    while (socket.sent.filter((m) => m.event === 'media').length < 100) await new Promise((r) => setTimeout(r, 5));
    // Playback reached frame 60: echo the marks sent before it.
    let frames = 0;
    const pending: string[] = [];
    let lastPlayed = 0;
    for (const m of [...socket.sent]) {
      if (m.event === 'media') frames++;
      if (m.event !== 'mark') continue;
      const name = (m.mark as { name: string }).name;
      if (frames <= 60) {
        socket.deliver({ event: 'mark', streamSid: 'MZfake', mark: { name } });
        lastPlayed = frames;
      } else pending.push(name);
    }
    expect(pending.length).toBeGreaterThan(0);
    socket.onSend = (m) => {
      if (m.event !== 'clear') return;
      for (const name of pending) socket.deliver({ event: 'mark', streamSid: 'MZfake', mark: { name } });
    };
    const heard = (await bridge.bargeIn())!;
    expect((await done).outcome).toBe('interrupted');
    expect(heard.playedMs).toBe(lastPlayed * 20);
    expect(heard.heardText.length).toBeLessThan(LONG.length / 2);
  });

  it('stop from the provider ends the turn with what was heard', async () => {
    const { peer, bridge } = await call();
    const speech = await createSpeechStream(serviceConfigOf(server), { format: 'pcm' });
    const done = bridge.speak(speech);
    speech.end(LONG);
    await peer.until(() => peer.queuedBytes() >= 50 * FRAME, '1 s of audio');
    peer.advance(20);
    await peer.stop();
    const result = await done;
    expect(result.outcome).toBe('stopped');
    expect(result.heard.playedMs).toBeLessThanOrEqual(400);
    expect(bridge.stopped).toBe(true);
  });

  it('refuses a media format it cannot speak, naming it', async () => {
    const before = accepted.length;
    const peer = await connectMediaStreamPeer(url, { encoding: 'audio/l16', sampleRate: 16000 });
    while (accepted.length <= before) await new Promise((r) => setTimeout(r, 5));
    const err = await accepted[before]!.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VoxpipeError);
    expect((err as VoxpipeError).code).toBe('unsupported');
    expect((err as VoxpipeError).message).toContain('16000 Hz');
    await peer.stop();
  });
});
