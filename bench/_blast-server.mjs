// A stand-in realtime v2 server that generates nothing: it answers the
// reliable exchange with valid events and, for every flushed segment, sends
// AUDIO_BYTES of PCM in FRAME_BYTES frames as fast as the socket takes them.
// With no speech engine in the way, the client is the bottleneck, so the
// client benchmarks can measure the client's own throughput ceiling.
// Run as a child process: `node bench/_blast-server.mjs` prints
// `{"port":N}` and serves until SIGTERM. (Not a bench: run-all skips `_` files.)
import { randomUUID } from 'node:crypto';
import { Decoder, Encoder } from '@msgpack/msgpack';
import { WebSocketServer } from 'ws';

const SUBPROTOCOL = 'realtime.tts.msgpack.v2';
export const BLAST_FRAME_BYTES = 8 * 1024; // what the reference server coalesces to
/** Audio per segment: BLAST_AUDIO_BYTES from the environment, default 8 MiB (~175 s of 24 kHz audio); a whole number of frames. */
export const BLAST_AUDIO_BYTES = Math.max(1, Math.round(Number(process.env.BLAST_AUDIO_BYTES ?? 8 * 1024 * 1024) / BLAST_FRAME_BYTES)) * BLAST_FRAME_BYTES;
const SAMPLE_RATE = 24_000;
const HIGH_WATER_BYTES = 1024 * 1024; // stop and wait for the socket to drain above this

const encoder = new Encoder();
const decoder = new Decoder();
const pcm = new Uint8Array(BLAST_FRAME_BYTES); // silence
let eventIds = 0;

function sendEvent(ws, body) {
  ws.send(encoder.encode({ event_id: `blast-${++eventIds}`, trace_id: 'blast', timestamp: Date.now(), ...body }));
}

function blast(ws, state, segmentId) {
  const frames = BLAST_AUDIO_BYTES / BLAST_FRAME_BYTES;
  let sent = 0;
  const pump = () => {
    while (sent < frames) {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > HIGH_WATER_BYTES) {
        setImmediate(pump);
        return;
      }
      sent++;
      sendEvent(ws, {
        event: 'audio',
        request_id: state.requestId,
        session_id: state.sessionId,
        segment_id: segmentId,
        sequence: ++state.audioSequence,
        audio: pcm,
        format: 'pcm',
        sample_rate: SAMPLE_RATE,
        channels: 1,
        bit_depth: 16,
      });
    }
    state.units += 1;
    sendEvent(ws, { event: 'usage', request_id: state.requestId, segment_id: segmentId, segment_units: 1, session_units: state.units, quota_remaining: 1e9, audio_bytes: BLAST_AUDIO_BYTES });
    sendEvent(ws, { event: 'segment_completed', request_id: state.requestId, segment_id: segmentId, units: 1, audio_bytes: BLAST_AUDIO_BYTES });
    state.busy = false;
    if (state.stopping) finish(ws, state);
  };
  state.busy = true;
  pump();
}

function finish(ws, state) {
  sendEvent(ws, { event: 'finish', request_id: state.requestId, session_id: state.sessionId, reason: 'completed', units: state.units });
}

function onConnection(ws) {
  const state = { sessionId: randomUUID(), requestId: '', audioSequence: 0, units: 0, busy: false, stopping: false, chars: 0 };
  sendEvent(ws, { event: 'authenticated', session_id: state.sessionId, site: 'blast', protocol_version: 2, quota: 1e9 });
  ws.on('message', (data) => {
    const event = decoder.decode(data);
    switch (event.event) {
      case 'start':
        state.requestId = event.request_id ?? randomUUID();
        sendEvent(ws, {
          event: 'ready',
          in_reply_to: event.event_id,
          mode: event.mode ?? 'simple',
          request_id: state.requestId,
          session_id: state.sessionId,
          provider: 'blast',
          model: event.request.model,
          voice_id: event.request.voice_id,
          format: 'pcm',
          sample_rate: SAMPLE_RATE,
          channels: 1,
          bit_depth: 16,
        });
        return;
      case 'text':
        state.chars += event.text.length;
        sendEvent(ws, { event: 'input_ack', in_reply_to: event.event_id, request_id: state.requestId, sequence: event.sequence, characters: event.text.length, buffered_characters: state.chars, remaining_capacity: 10_000 - state.chars });
        return;
      case 'flush':
        sendEvent(ws, { event: 'segment_accepted', in_reply_to: event.event_id, request_id: state.requestId, segment_id: event.segment_id, characters: state.chars, reserved_units: 1 });
        state.chars = 0;
        blast(ws, state, event.segment_id);
        return;
      case 'stop':
        state.stopping = true;
        if (!state.busy) finish(ws, state);
        return;
      case 'ping':
        sendEvent(ws, { event: 'pong', in_reply_to: event.event_id, session_id: state.sessionId });
        return;
      default:
    }
  });
  ws.on('error', () => undefined);
}

/** Start the server on a free loopback port. */
export function startBlastServer() {
  return new Promise((resolve) => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/v2/tts/live', perMessageDeflate: false, handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false) });
    wss.on('connection', onConnection);
    wss.on('listening', () => resolve({ port: wss.address().port, close: () => new Promise((done) => wss.close(() => done())) }));
  });
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const server = await startBlastServer();
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
  process.once('SIGTERM', () => {
    void server.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
