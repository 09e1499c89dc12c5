/**
 * A stand-in for a telephony provider's media stream (Twilio Media Streams,
 * bidirectional), written from the published message reference: it connects
 * to the app's WebSocket server as the provider does when a call starts and
 * speaks the JSON protocol (no account, nothing leaves the machine).
 *
 * - Sends `connected`, then `start` (streamSid, callSid, tracks, mediaFormat
 *   audio/x-mulaw 8000 Hz mono, customParameters), each later message with an
 *   increasing `sequenceNumber` and the `streamSid`.
 * - Queues the app's `media` payloads for playback and plays them in order,
 *   160 bytes (20 ms) at a time: on a 20 ms clock (`autoplay`) or when the
 *   test says (`advance(frames)`), so tests need no timing.
 * - Echoes a `mark` when playback reaches it (all audio sent before it was
 *   played); on `clear` drops the audio queued and returns the marks still
 *   pending, as the provider does.
 * - Sends the caller's audio as `media` on the inbound track (20 ms frames,
 *   `chunk` and `timestamp`), `dtmf`, and `stop`.
 *
 * Everything received is recorded for assertions.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { referenceEncode } from './g711-reference.js';

const FRAME = 160;

type QueueItem = { kind: 'audio'; bytes: Buffer } | { kind: 'mark'; name: string };

export interface PeerOptions {
  /** Play on a 20 ms clock; default false (the test calls `advance`). */
  autoplay?: boolean;
  encoding?: string;
  sampleRate?: number;
  customParameters?: Record<string, string>;
}

export interface MediaStreamPeer {
  readonly streamSid: string;
  readonly callSid: string;
  /** Every message the app sent, parsed, in order. */
  readonly received: Record<string, unknown>[];
  /** Every media payload the app sent, decoded, concatenated. */
  receivedAudio(): Buffer;
  /** Audio played so far (bytes of 8 kHz G.711). */
  readonly played: Buffer[];
  playedBytes(): number;
  /** Marks echoed because playback reached them, with the played bytes at that moment. */
  readonly echoedOnPlayback: { name: string; playedBytes: number }[];
  /** Marks returned because of a `clear`. */
  readonly echoedOnClear: string[];
  /** Each `clear`: the bytes played when it came, and the bytes it dropped. */
  readonly clears: { playedBytes: number; droppedBytes: number }[];
  /** Bytes of audio queued and not yet played. */
  queuedBytes(): number;
  /** Play up to `frames` frames (fewer if the queue runs dry); returns the frames played. */
  advance(frames: number): number;
  /** Send the caller's audio (16-bit PCM at 8 kHz), mu-law encoded, in 20 ms frames. */
  sendCallerAudio(pcm: Int16Array): Buffer;
  sendDtmf(digit: string): void;
  /** Send `stop` and close the socket. */
  stop(): Promise<void>;
  /** Wait until `predicate` holds after some message arrives (or now). */
  until(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
}

export async function connectMediaStreamPeer(url: string, options: PeerOptions = {}): Promise<MediaStreamPeer> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const streamSid = `MZ${randomBytes(16).toString('hex')}`;
  const callSid = `CA${randomBytes(16).toString('hex')}`;
  const accountSid = `AC${randomBytes(16).toString('hex')}`;
  let seq = 0;
  let chunk = 0;
  let timestamp = 0;
  const send = (msg: Record<string, unknown>) => ws.send(JSON.stringify({ ...msg, sequenceNumber: String(++seq) }));
  ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  send({
    event: 'start',
    streamSid,
    start: {
      accountSid,
      streamSid,
      callSid,
      tracks: ['inbound'],
      customParameters: options.customParameters ?? {},
      mediaFormat: { encoding: options.encoding ?? 'audio/x-mulaw', sampleRate: options.sampleRate ?? 8000, channels: 1 },
    },
  });

  const received: Record<string, unknown>[] = [];
  const receivedPayloads: Buffer[] = [];
  const queue: QueueItem[] = [];
  const played: Buffer[] = [];
  let playedTotal = 0;
  const echoedOnPlayback: { name: string; playedBytes: number }[] = [];
  const echoedOnClear: string[] = [];
  const clears: { playedBytes: number; droppedBytes: number }[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };

  const echo = (name: string) => send({ event: 'mark', streamSid, mark: { name } });
  /** Echo the marks at the head of the queue: everything before them has played. */
  const echoReached = () => {
    while (queue[0]?.kind === 'mark') {
      const item = queue.shift() as { kind: 'mark'; name: string };
      echoedOnPlayback.push({ name: item.name, playedBytes: playedTotal });
      echo(item.name);
    }
  };

  ws.on('message', (data, isBinary) => {
    if (isBinary) throw new Error('the app sent a binary frame; the protocol is JSON text');
    const msg = JSON.parse(data.toString()) as Record<string, unknown>;
    received.push(msg);
    if (msg.streamSid !== streamSid) throw new Error(`message without this stream's streamSid: ${data.toString().slice(0, 120)}`);
    if (msg.event === 'media') {
      const bytes = Buffer.from((msg.media as { payload: string }).payload, 'base64');
      receivedPayloads.push(bytes);
      queue.push({ kind: 'audio', bytes });
    } else if (msg.event === 'mark') {
      queue.push({ kind: 'mark', name: (msg.mark as { name: string }).name });
      echoReached();
    } else if (msg.event === 'clear') {
      let dropped = 0;
      for (const item of queue.splice(0)) {
        if (item.kind === 'audio') dropped += item.bytes.length;
        else {
          echoedOnClear.push(item.name);
          echo(item.name);
        }
      }
      clears.push({ playedBytes: playedTotal, droppedBytes: dropped });
    }
    notify();
  });

  const advance = (frames: number): number => {
    let n = 0;
    echoReached();
    while (n < frames) {
      let need = FRAME;
      let any = false;
      while (need > 0 && queue[0]?.kind === 'audio') {
        const head = queue[0];
        const take = head.bytes.subarray(0, need);
        played.push(take);
        playedTotal += take.length;
        need -= take.length;
        any = true;
        if (take.length === head.bytes.length) queue.shift();
        else head.bytes = head.bytes.subarray(take.length);
        if (need > 0) echoReached();
      }
      if (!any) break;
      n++;
      echoReached();
    }
    notify();
    return n;
  };

  const timer = options.autoplay ? setInterval(() => advance(1), 20) : undefined;
  ws.once('close', () => {
    if (timer) clearInterval(timer);
    notify();
  });

  return {
    streamSid,
    callSid,
    received,
    receivedAudio: () => Buffer.concat(receivedPayloads),
    played,
    playedBytes: () => playedTotal,
    echoedOnPlayback,
    echoedOnClear,
    clears,
    queuedBytes: () => queue.reduce((n, i) => n + (i.kind === 'audio' ? i.bytes.length : 0), 0),
    advance,
    sendCallerAudio(pcm) {
      const encoded = referenceEncode(pcm, 'mulaw');
      for (let off = 0; off < encoded.length; off += FRAME) {
        send({ event: 'media', streamSid, media: { track: 'inbound', chunk: String(++chunk), timestamp: String(timestamp), payload: encoded.subarray(off, off + FRAME).toString('base64') } });
        timestamp += 20;
      }
      return encoded;
    },
    sendDtmf(digit) {
      send({ event: 'dtmf', streamSid, dtmf: { track: 'inbound_track', digit } });
    },
    async stop() {
      if (timer) clearInterval(timer);
      if (ws.readyState === WebSocket.OPEN) {
        send({ event: 'stop', streamSid, stop: { accountSid, callSid } });
        ws.close(1000);
      }
      if (ws.readyState !== WebSocket.CLOSED) await new Promise((r) => ws.once('close', r));
    },
    until(predicate, what, timeoutMs = 20_000) {
      if (predicate()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timeout = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`stand-in peer: timed out waiting for ${what}`));
        }, timeoutMs);
        const check = () => {
          if (!predicate()) return;
          clearTimeout(timeout);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
  };
}
