/**
 * The same played position gives the same heard text on every platform:
 * one turn (the same text, the same audio: the reference server's tone
 * engine is deterministic) spoken through SpeechStream (Node), BrowserSpeech
 * (the page's facade, over `ws` standing in for the browser's WebSocket) and
 * the telephony bridge (G.711 mu-law, marks echoed up to the position), each
 * asked what was heard at the same position. Real reference server on port 0.
 */
import { WebSocket as NodeWebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSpeech } from '../../src/browser/speech.js';
import { defaultVoice } from '../../src/discovery.js';
import { createBrowserTicket } from '../../src/realtime/browser-ticket.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream } from '../../src/speech.js';
import { MediaStreamBridge, type HeardReport } from '../../src/telephony/bridge.js';
import type { InterruptReport } from '../../src/stream/speech-stream.js';
import type { ServiceConfig } from '../../src/config.js';

const TEXT = 'Sentence number one keeps the listener busy for a while. Then another follows it, and a third one ends the turn.';
const MODEL = 'svc-s21pro-flash';
const ORIGIN = 'https://app.example';

let server: ReferenceServer;
let config: ServiceConfig;
let voiceId: string;
const saved = globalThis.WebSocket;

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  config = serviceConfigOf(server);
  voiceId = await defaultVoice(config, MODEL);
  // The browser's WebSocket, as the page has it: `ws` with the page's Origin header.
  class PageWebSocket extends NodeWebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { origin: ORIGIN, perMessageDeflate: false });
    }
  }
  (globalThis as { WebSocket: unknown }).WebSocket = PageWebSocket;
});
afterAll(async () => {
  (globalThis as { WebSocket: unknown }).WebSocket = saved;
  await server.close();
});

/** Node: the turn read (to its end, or until `readBytes`), then asked at `ms`. */
async function node(ms: number, readBytes = Infinity): Promise<{ report: InterruptReport; durationMs: number }> {
  const speech = await createSpeechStream(config, { format: 'pcm', voiceId, model: MODEL });
  speech.end(TEXT);
  let bytes = 0;
  for await (const chunk of speech.chunks()) if ((bytes += chunk.data.length) >= readBytes) break;
  const info = speech.info!;
  const report = await speech.interrupt({ playedMs: ms });
  return { report, durationMs: (bytes / (info.sampleRate * info.channels * 2)) * 1000 };
}

/** The page: the turn taken from `audio()` (to its end, or until `readBytes`), then asked at `{ ms }`. */
async function page(ms: number, readBytes = Infinity): Promise<string> {
  const speech = new BrowserSpeech({
    wsUrl: config.wsUrl,
    voiceId,
    model: MODEL,
    format: 'pcm',
    getTicket: async () => (await createBrowserTicket({ rtHttpUrl: config.rtHttpUrl, apiKey: config.apiKey, origin: ORIGIN })).ticket,
    getStatus: () => Promise.resolve(null),
  });
  speech.end(TEXT);
  let bytes = 0;
  for await (const chunk of speech.audio()) if ((bytes += chunk.data.byteLength) >= readBytes) break;
  return speech.interrupt({ ms }).heardText;
}

/** A provider's media stream: records what the bridge sends, echoes what it is told to. */
class FakeSocket {
  readyState = 1;
  readonly sent: Record<string, unknown>[] = [];
  readonly #message: ((data: Buffer, isBinary: boolean) => void)[] = [];
  send(data: string): void {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }
  close(): void {
    this.readyState = 3;
  }
  on(event: 'message' | 'close', listener: (...args: never[]) => void): this {
    if (event === 'message') this.#message.push(listener as (data: Buffer, isBinary: boolean) => void);
    return this;
  }
  deliver(message: Record<string, unknown>): void {
    for (const l of this.#message) l(Buffer.from(JSON.stringify(message)), false);
  }
}

/** The phone: the turn sent as mu-law (to its end, or until `sentMs` of it), the marks up to `ms` echoed as played, then a barge-in. */
async function phone(ms: number, sentMs?: number): Promise<HeardReport> {
  const socket = new FakeSocket();
  const accepting = MediaStreamBridge.accept(socket);
  socket.deliver({ event: 'start', sequenceNumber: '1', streamSid: 'MZ1', start: { streamSid: 'MZ1', callSid: 'CA1', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } });
  const bridge = await accepting;
  const speech = await createSpeechStream(config, { format: 'pcm', voiceId, model: MODEL });
  void bridge.speak(speech);
  const ended = new Promise<void>((resolve) => speech.once('end', () => resolve()));
  speech.end(TEXT);
  if (sentMs === undefined) {
    await ended;
    // Every frame handed over.
    await new Promise((r) => setTimeout(r, 50));
  } else while (socket.sent.filter((m) => m.event === 'media').length * 20 < sentMs) await new Promise((r) => setTimeout(r, 5));
  // The provider played up to `ms`, a 20 ms frame at a time.
  let frames = 0;
  for (const m of [...socket.sent]) {
    if (m.event === 'media') frames++;
    else if (m.event === 'mark' && frames * 20 <= ms) socket.deliver({ event: 'mark', streamSid: 'MZ1', mark: m.mark });
  }
  const heard = (await bridge.bargeIn())!;
  expect(heard.playedMs).toBe(ms);
  return heard;
}

describe('what was heard: one answer on every platform', () => {
  it('Node, the page and the phone cut the same turn at the same played position to the same words', async () => {
    const { durationMs } = await node(0);
    // Positions every 200 ms (where the bridge marks), through every segment of the turn.
    const positions = [400, 1_200, 2_000, 3_000, 4_400, 5_600, 6_800].filter((ms) => ms < durationMs - 200);
    expect(positions.length).toBeGreaterThanOrEqual(5);
    const seen = new Set<string>();
    for (const ms of positions) {
      const onNode = (await node(ms)).report.heardText;
      const onPage = await page(ms);
      const onPhone = (await phone(ms)).heardText;
      expect({ ms, onPage, onPhone }).toEqual({ ms, onPage: onNode, onPhone: onNode });
      expect(TEXT.startsWith(onNode)).toBe(true);
      seen.add(onNode);
    }
    // The positions fall in different words: a rule that said nothing would pass too.
    expect(seen.size).toBeGreaterThanOrEqual(4);
  }, 60_000);

  it('a segment heard in part while its audio still arrives (its words placed from the audio so far): the same words on every platform', async () => {
    // Where the first segment ends, from a turn read whole.
    const whole = await createSpeechStream(config, { format: 'pcm', voiceId, model: MODEL });
    const firstMs = new Promise<number>((resolve) => whole.once('segment', (s) => resolve(s.receivedBytes / 48)));
    whole.end(TEXT);
    for await (const _ of whole.chunks());
    // A position (a mark's) inside the second segment; the audio arrives slowly, so that segment is still arriving when the listener barges in.
    const at = Math.ceil(((await firstMs) + 300) / 200) * 200;
    const arrived = (at + 400) * 48;
    server.faults.set({ latencyMs: 15 });
    try {
      const { report } = await node(at, arrived);
      expect(report.spoken[1]!.complete).toBe(false);
      const onNode = report.heardText;
      const onPage = await page(at, arrived);
      const heard = await phone(at, arrived / 48);
      expect(heard.segments[1]!.complete).toBe(false);
      const onPhone = heard.heardText;
      expect({ onPage, onPhone }).toEqual({ onPage: onNode, onPhone: onNode });
      // Into the second segment, to a word of it.
      const firstText = TEXT.slice(0, TEXT.indexOf('.') + 1);
      expect(onNode.length).toBeGreaterThan(firstText.length + 1);
      expect(TEXT.startsWith(onNode)).toBe(true);
    } finally {
      server.faults.set({ latencyMs: 0 });
    }
  }, 60_000);
});
