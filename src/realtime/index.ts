/**
 * The realtime v2 client: one connection (`connect`), the simple-mode and
 * reliable-mode sessions (both `SegmentTransport`s that SpeechStream
 * drives), the pure reliable state machine they are built on, and the one
 * driver between a machine and a platform's link and reads.
 */
export { connect, liveUrl } from './connection.js';
export type { CloseInfo, ConnectOptions, RealtimeConnection } from './connection.js';
export { SimpleSession } from './simple-session.js';
export type { SimpleSessionOptions, SimpleSummary } from './simple-session.js';
export { ReliableSession } from './reliable/session.js';
export { Driver } from './driver.js';
export { TransportDriver } from './transport-driver.js';
export type { TransportDriverOptions, TransportOwner } from './transport-driver.js';
export type { DriverAudio, DriverEvent, DriverOptions, DriverOwner, DrivenMachine, Link, LinkConnection, LinkHandlers, Reads } from './driver.js';
export type { ReliableSessionOptions, ReliableSummary } from './reliable/session.js';
export { ReliableMachine, Phase as MachinePhase, ResumeErrorCode, MachineWarning, defaultPartialPolicy } from './reliable/machine.js';
export { PartialSegmentPolicy, SegmentState, TimerId, WaterfallStage } from './reliable/types.js';
export type {
  MachineAudio,
  MachineEvent,
  MachineInput,
  MachineOptions,
  MachinePort,
  MachineSegmentResult,
  MachineSummary,
  SegmentAudioResult,
  StatusResult,
} from './reliable/types.js';
export { backoffDelayMs, DEFAULT_BACKOFF, resolveBackoff } from '../backoff.js';
export type { BackoffPolicy } from '../backoff.js';
export { fetchRequestStatus, fetchSegmentAudio } from './status-client.js';
export type { HttpReadOptions } from './status-client.js';
export type { RealtimeSegmentResult, WireWaterfall, SessionTimings } from './waterfall.js';
export { createBrowserTicket, mintTicket } from './browser-ticket.js';
export type { BrowserTicket, BrowserTicketOptions } from './browser-ticket.js';
export { createRealtimeTransport } from './transport.js';
export type { RealtimeTransportOptions } from './transport.js';
