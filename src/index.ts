/**
 * voxpipe: text streams in, live speech out.
 *
 * The main path: `openService()` (configured service or the embedded
 * reference server), `createSpeechStream(config, options)` (a Duplex: text
 * in, audio out), then pipe into a sink from `sinks`. Subsystems are also
 * exported as namespaces: `realtime`, `http`, `sinks`, `protocol`.
 */
export { createSpeechPool, createSpeechStream, createTransport, defaultVoice, TRANSPORT_CHOICES } from './speech.js';
export { fetchCapabilities, listVoices } from './discovery.js';
export { mintTicket } from './realtime/browser-ticket.js';
export type { BrowserTicket } from './realtime/browser-ticket.js';
export type { Capabilities, VoiceInfo } from './discovery.js';
export type { RealtimeTuning, SpeechOptions, SpeechPool, SpeechPoolOptions, TransportChoice } from './speech.js';
export { SpeechStream, shouldFailover } from './stream/speech-stream.js';
export type {
  InterruptReport,
  SegmentWaterfall,
  SpeechStreamEventMap,
  SpeechStreamOptions,
  SpeechStreamSummary,
  StreamWaterfall,
} from './stream/speech-stream.js';
export { TransportName } from './transport.js';
export type { ReadyInfo, SegmentInput, SegmentResult, SegmentTransport, TransportEvents, TransportSummary, UsageInfo } from './transport.js';
export { TokenSegmenter } from './stream/token-segmenter.js';
export type { TokenSegmenterOptions } from './stream/token-segmenter.js';
export { estimateArrivingWordTimings, estimateWordTimings, FrameEnergies, heardAtWord, proportionalWordTimings, type HeardCut, type WordTiming, type WordTimingAudio } from './stream/word-timing.js';
export { heardAt, type HeardLayout, type HeardSegment, type HeardText, type PlayedPosition, type SpokenAudio } from './stream/heard.js';
export { SyncTransport } from './stream/transports/sync.js';
export { AsyncTransport } from './stream/transports/async.js';
export { CompatTransport } from './stream/transports/compat.js';
export { ReliableSession, SimpleSession } from './realtime/index.js';
export type { ReliableSessionOptions, SimpleSessionOptions } from './realtime/index.js';
export { createClient } from './http/index.js';
export type { ClientOptions, VoxpipeClient } from './http/index.js';
export { openService, serviceConfigOf } from './service.js';
export type { OpenServiceOptions, Service } from './service.js';
export { configFromEnv, deriveUrls } from './config.js';
export { deploymentBudget, DeploymentBudget, Priority, Seat } from './budget.js';
export type { BudgetOptions, BudgetStats, SeatOptions } from './budget.js';
export type { ServiceConfig } from './config.js';
export * from './errors.js';
export type { AudioChunk, AudioFormat, PcmInfo } from './protocol/audio.js';
export { verifyWebhookSignature, signWebhook, parseSignatureHeader, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_EVENT_ID_HEADER, WEBHOOK_EVENT_TYPE_HEADER, WEBHOOK_TOLERANCE_MS } from './protocol/webhooks.js';

export { AttemptOutcome, ChannelName, RequestOutcome } from './telemetry/channels.js';
export type {
  AttemptEndMessage,
  AttemptStartMessage,
  ChannelMessages,
  HttpRequestEndMessage,
  HttpRequestInfo,
  HttpRequestStartMessage,
  RequestEndMessage,
  RequestErrorMessage,
  RequestFailoverMessage,
  RequestFirstAudioMessage,
  RequestReadyMessage,
  RequestResumeMessage,
  RequestRetryMessage,
  RequestRolloverMessage,
  RequestStartMessage,
  SegmentCompleteMessage,
  SegmentFirstAudioMessage,
  SegmentSentMessage,
  SegmentStartMessage,
  ServerEndpoint,
  StreamMessage,
} from './telemetry/channels.js';

export * as realtime from './realtime/index.js';
export * as http from './http/index.js';
export * as sinks from './sinks/index.js';
export * as protocol from './protocol/index.js';
