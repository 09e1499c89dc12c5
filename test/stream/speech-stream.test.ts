import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { SpeechStream } from '../../src/stream/speech-stream.js';
import { FakeTransport } from '../helpers/fake-transport.js';

const TEXT =
  'Hello there, friend. This is a test of the stream. It has several sentences! ' +
  'Does it keep every byte in order? It should, because nothing may be lost. ' +
  'The end is near. Goodbye.';

function tokens(text: string, size = 3): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function writeAll(speech: SpeechStream, parts: string[]): Promise<void> {
  for (const p of parts) {
    if (!speech.write(p)) await new Promise((r) => speech.once('drain', r));
  }
  speech.end();
}

async function collect(speech: SpeechStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of speech) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('SpeechStream', () => {
  it('speaks token-streamed text in order with nothing lost or repeated', async () => {
    const transport = new FakeTransport();
    const speech = new SpeechStream({ transport });
    const [out] = await Promise.all([collect(speech), writeAll(speech, tokens(TEXT))]);
    // The fake's audio for a segment is its text: the output is the input.
    expect(out.toString('utf8')).toBe(TEXT);
    expect(transport.sent.length).toBeGreaterThan(1);
    expect(transport.sent.map((s) => s.text).join('')).toBe(TEXT);
    const summary = speech.summary();
    expect(summary.segments.map((s) => s.segmentId)).toEqual(transport.sent.map((s) => s.segmentId));
    expect(summary.bytes).toBe(Buffer.byteLength(TEXT));
    expect(summary.waterfall.ttfaMs).toBeGreaterThanOrEqual(0);
    for (const s of summary.segments) {
      expect(s.waterfall.sentMs).toBeGreaterThanOrEqual(s.waterfall.textReceivedMs);
      expect(s.waterfall.completedMs).toBeGreaterThanOrEqual(s.waterfall.firstAudioMs!);
    }
  });

  it('works with pipeline() into a sink', async () => {
    const transport = new FakeTransport();
    const speech = new SpeechStream({ transport });
    const got: Buffer[] = [];
    const sink = new Writable({ write(c, _e, cb) { got.push(c); cb(); } });
    speech.end(TEXT);
    await pipeline(speech, sink);
    expect(Buffer.concat(got).toString()).toBe(TEXT);
  });

  it('pauses the transport when the reader stalls, keeps audio bounded, then completes with nothing lost', async () => {
    const long = 'This sentence is here to make audio. '.repeat(200);
    const transport = new FakeTransport({ chunkBytes: 64 });
    const bound = 1024;
    const speech = new SpeechStream({ transport, maxBufferedAudioBytes: bound });
    speech.end(long);
    // Nobody reads for a while.
    await new Promise((r) => setTimeout(r, 200));
    expect(transport.pauses).toBeGreaterThan(0);
    // Held audio stays under the bound plus one chunk in flight.
    expect(speech.readableLength).toBeLessThanOrEqual(bound + 64);
    const out = await collect(speech);
    expect(out.toString()).toBe(long);
  });

  it('yields chunks with metadata from chunks()', async () => {
    const transport = new FakeTransport();
    const speech = new SpeechStream({ transport });
    speech.end(TEXT);
    const seen: string[] = [];
    let last = 0;
    let text = '';
    for await (const c of speech.chunks()) {
      expect(c.sequence).toBeGreaterThan(last);
      last = c.sequence;
      seen.push(c.segmentId);
      text += c.data.toString();
    }
    expect(text).toBe(TEXT);
    expect(new Set(seen).size).toBe(transport.sent.length);
  });

  it('flush() speaks what is buffered and resolves with its usage', async () => {
    const transport = new FakeTransport();
    const speech = new SpeechStream({ transport });
    speech.resume();
    speech.write('no sentence end here');
    const result = await speech.flush();
    expect(result?.units).toBe('no sentence end here'.length);
    expect(transport.sent.map((s) => s.text)).toEqual(['no sentence end here']);
    speech.end();
  });

  it('interrupt() stops audio, ends the request and reports what was spoken', async () => {
    const transport = new FakeTransport({ chunkBytes: 2 });
    const speech = new SpeechStream({ transport });
    speech.write(TEXT);
    let bytesBefore = 0;
    let afterInterrupt = 0;
    let interrupted = false;
    speech.on('data', (c: Buffer) => {
      if (interrupted) afterInterrupt += c.length;
      else bytesBefore += c.length;
    });
    await new Promise<void>((resolve) => speech.once('segment', () => resolve()));
    interrupted = true;
    const report = await speech.interrupt();
    await new Promise((r) => setTimeout(r, 50));
    expect(afterInterrupt).toBe(0);
    expect(transport.aborted).toBe(true);
    expect(report.spoken.length).toBeGreaterThan(0);
    expect(report.spoken[0]!.complete).toBe(true);
    expect(report.spokenChars).toBeGreaterThan(0);
    const spokenText = report.spoken.filter((s) => s.complete).map((s) => s.text).join('');
    expect(TEXT.startsWith(spokenText)).toBe(true);
    expect(spokenText + report.unspokenText.slice(0)).not.toBe('');
    expect(bytesBefore).toBeGreaterThanOrEqual(Buffer.byteLength(spokenText));
  });

  it('fails over to the fallback at a segment boundary with no missing or repeated audio', async () => {
    const primary = new FakeTransport({ failAtSegment: 1, failAfterBytes: 6 });
    const fallback = new FakeTransport({ name: 'sync' });
    const speech = new SpeechStream({ transport: primary, fallback: () => fallback });
    const events: string[] = [];
    speech.on('failover', (f) => events.push(`${f.from}->${f.to}`));
    const [out] = await Promise.all([collect(speech), writeAll(speech, tokens(TEXT, 5))]);
    expect(out.toString()).toBe(TEXT);
    expect(events).toEqual(['realtime->sync']);
    const served = speech.summary().segments.map((s) => s.transport);
    expect(served[0]).toBe('realtime');
    expect(served.slice(1).every((t) => t === 'sync')).toBe(true);
    // The fallback got exactly the segments not completed by the primary.
    expect(fallback.sent[0]!.segmentId).toBe(primary.sent[1]!.segmentId);
  });

  it('an aborted signal destroys the stream with an AbortError', async () => {
    const controller = new AbortController();
    const speech = new SpeechStream({ transport: new FakeTransport(), signal: controller.signal });
    const err = new Promise<Error>((resolve) => speech.once('error', resolve));
    speech.write('Some text. More text.');
    controller.abort();
    expect((await err) as unknown as { code: string }).toMatchObject({ code: 'aborted' });
  });
});
