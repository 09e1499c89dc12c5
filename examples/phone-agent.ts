/**
 * A phone agent: speech on a telephone call through a Twilio-style media
 * stream (`voxpipe/telephony`). Your server accepts the provider's WebSocket
 * (Twilio's `<Connect><Stream url="wss://...">`), speaks SpeechStreams to
 * the caller as 8 kHz mu-law, listens to the caller's audio, and on barge-in
 * clears the provider's buffer and learns what the caller heard.
 *
 * Runs with no configuration and no phone account: a stand-in provider
 * (test/helpers/media-stream-peer.ts, written from the published protocol)
 * places the "call" on this machine and plays the audio in real time.
 *
 *   npx tsx examples/phone-agent.ts
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { createSpeechStream, openService } from 'voxpipe';
import { MediaStreamBridge, type HeardReport } from 'voxpipe/telephony';
import { connectMediaStreamPeer } from '../test/helpers/media-stream-peer.js';

const GREETING =
  'Hello, thanks for calling the support line. I can help with orders, returns and delivery times. ' +
  'To start, could you tell me the number on your receipt? It is printed under the barcode.';
const REPLY = 'Sure, go ahead. I am listening.';
const CALLER_SPEAKS_AFTER_MS = 1_500; // the caller talks over the greeting after 1.5 s of it

/** A crude voice detector: 20 ms of caller audio louder than this RMS counts as speech. */
const SPEECH_RMS = 1_000;

const service = await openService({ onNote: (n) => console.error(`note: ${n}`) });
// Your app's server: the provider connects here when a call starts.
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
await new Promise((r) => wss.once('listening', r));
const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/media`;

async function agent(bridge: MediaStreamBridge): Promise<void> {
  console.log(`call ${bridge.callSid}: stream ${bridge.streamSid}, ${bridge.law} at 8000 Hz`);
  // Turn 1: the greeting, which the caller interrupts.
  const greeting = await createSpeechStream(service.config, { format: 'pcm' });
  const started = performance.now();
  let bargedIn: Promise<HeardReport | undefined> | undefined;
  const onAudio = (pcm: Int16Array) => {
    const rms = Math.sqrt(pcm.reduce((n, v) => n + v * v, 0) / pcm.length);
    if (rms > SPEECH_RMS && !bargedIn) bargedIn = bridge.bargeIn();
  };
  bridge.on('audio', onAudio);
  const first = bridge.speak(greeting);
  greeting.end(GREETING);
  const turn1 = await first;
  bridge.off('audio', onAudio);
  console.log(`turn 1 ${turn1.outcome} after ${Math.round(performance.now() - started)} ms: ${turn1.heard.playedMs} ms played of ${turn1.heard.sentMs} ms sent`);
  console.log(`heard: ${JSON.stringify(turn1.heard.heardText)}`);
  console.log(`not heard: ${JSON.stringify(turn1.heard.unheardText.slice(0, 60))}...`);

  // Turn 2: the reply, played to the end (the last mark comes back).
  const reply = await createSpeechStream(service.config, { format: 'pcm' });
  const second = bridge.speak(reply);
  reply.end(REPLY);
  const turn2 = await second;
  console.log(`turn 2 ${turn2.outcome}: ${turn2.frames} frames, ${turn2.marksAcknowledged}/${turn2.marksSent} marks acknowledged, heard ${JSON.stringify(turn2.heard.heardText)}`);
}

try {
  const agentDone = new Promise<void>((resolve, reject) => {
    wss.once('connection', (ws) => {
      MediaStreamBridge.accept(ws).then(agent).then(resolve, reject);
    });
  });
  // The stand-in provider places the call and plays what it gets in real time.
  const provider = await connectMediaStreamPeer(url, { autoplay: true });
  await provider.until(() => provider.playedBytes() >= (CALLER_SPEAKS_AFTER_MS / 1000) * 8000, 'the greeting to play');
  const voice = Int16Array.from({ length: 4000 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 180 * i) / 8000)));
  provider.sendCallerAudio(voice);
  await agentDone;
  console.log(`provider: ${provider.clears.length} clear, ${provider.echoedOnPlayback.length} marks echoed on playback`);
  await provider.stop();
} finally {
  for (const c of wss.clients) c.terminate();
  await new Promise((r) => wss.close(r));
  await service.close();
}
