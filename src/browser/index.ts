/**
 * `voxpipe/browser`: the realtime client for web pages (ESM, no Node
 * built-ins; bundled by `npm run build` to `dist/browser/voxpipe.js`, with
 * the AudioWorklet in `dist/browser/pcm-worklet.js`).
 *
 *   const speech = new BrowserSpeech({ wsUrl, voiceId, getTicket, getStatus });
 *   const info = await speech.open();
 *   const player = await PcmPlayer.create(info, { workletUrl });
 *   speech.end(text);
 *   for await (const chunk of speech.audio()) player.push(chunk.data);
 *
 * The page never holds the API key: `getTicket()` asks the app's server for
 * a single-use ticket (`mintTicket` of `voxpipe/server-helpers` or any
 * `POST /v2/tts/browser-tickets`), `getStatus(id)` asks it for the
 * request-status body when a connection must be resumed.
 */
export { BrowserSpeech, VoxpipeError } from './speech.js';
export type { BrowserAudio, BrowserInterruptReport, BrowserSegmentWaterfall, BrowserSpeechEvents, BrowserSpeechOptions } from './speech.js';
export { PcmPlayer } from './player.js';
export type { PcmPlayerOptions, PlayerPosition } from './player.js';
export type { ReadyInfo } from '../transport.js';
