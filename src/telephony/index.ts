/**
 * `voxpipe/telephony`: speak a SpeechStream on a phone call.
 *
 * - `MediaStreamBridge`: a Twilio-style media stream WebSocket (JSON
 *   `connected`, `start`, `media`, `mark`, `clear`, `stop`) bridged to a
 *   SpeechStream: text in, 8 kHz G.711 frames out with marks, the caller's
 *   audio back as PCM, barge-in with `clear` and the text heard.
 * - `encodeG711` / `decodeG711` (mu-law and A-law) and a band-limited
 *   `Resampler` (polyphase windowed sinc), usable on their own.
 */
export { MediaStreamBridge, type MediaStreamBridgeEvents, type MediaStreamBridgeOptions, type MediaStreamSocket, type HeardReport, type HeardSegment, type SpeakResult, type CallerAudioInfo } from './bridge.js';
export { G711Law, encodeG711, decodeG711, linearToMulaw, mulawToLinear, linearToAlaw, alawToLinear, g711Silence } from './g711.js';
export { Resampler, resample, type ResamplerOptions } from './resample.js';
export { cutAtWord, heardInSegment } from '../stream/heard.js';
export {
  FRAME_BYTES,
  FRAME_MS,
  TELEPHONY_SAMPLE_RATE,
  MediaEncoding,
  MediaStreamMessageError,
  parseInbound,
  formatOutbound,
  type InboundMessage,
  type OutboundMessage,
  type MediaFormat,
  type StartInfo,
} from './protocol.js';
