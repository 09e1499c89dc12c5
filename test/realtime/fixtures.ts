/**
 * Set-up of the realtime client's integration tests: a reference server on
 * port 0 with the deterministic `tone` engine, a session factory, and a run
 * helper that speaks segments and collects the output.
 */
import { DEFAULT_MODEL } from '../../src/protocol/constants.js';
import type { StartRequest } from '../../src/protocol/events.js';
import { ReliableSession, type ReliableSessionOptions, type ReliableSummary } from '../../src/realtime/reliable/session.js';
import { PUBLIC_VOICES } from '../../src/server/catalog.js';
import { startServer, type DialectName, type ReferenceServer } from '../../src/server/index.js';
import type { SegmentInput } from '../../src/transport.js';

export const API_KEY = 'sk-test-realtime-client';
export const USER_ID = 'client-tests';
export const VOICE_ID = PUBLIC_VOICES[0]!.voiceId;
export const REQUEST: StartRequest = { voice_id: VOICE_ID, model: DEFAULT_MODEL, format: 'pcm' };

/** Four segments, long enough for several audio frames each. */
export const SEGMENTS: SegmentInput[] = [
  { segmentId: 'seg-1', text: 'The quick brown fox jumps over the lazy dog near the river bank.' },
  { segmentId: 'seg-2', text: 'Pack my box with five dozen liquor jugs, said the sailor, twice.' },
  { segmentId: 'seg-3', text: 'How vexingly quick daft zebras jump when the band starts playing.' },
  { segmentId: 'seg-4', text: 'Sphinx of black quartz, judge my vow, and then go home to rest.' },
];

/** The server of the suite: the dialect of `VOXPIPE_DIALECT` (vitest.config.ts runs the client suites under each), unless `dialect` pins one. */
export function startTestServer(dialect?: DialectName): Promise<ReferenceServer> {
  return startServer({ engine: 'tone', accounts: [{ apiKey: API_KEY, userId: USER_ID, apiQuota: 1_000_000 }], ...(dialect && { dialect }) });
}

/** A session on `server` with fast backoff (tests must not wait seconds). */
export function session(server: ReferenceServer, options: Partial<ReliableSessionOptions> = {}): ReliableSession {
  return new ReliableSession({
    wsUrl: server.wsUrl,
    rtHttpUrl: server.rtHttpUrl,
    apiKey: API_KEY,
    request: REQUEST,
    backoff: { baseMs: 10, maxMs: 50 },
    ...options,
  });
}

export interface RunResult {
  audio: Buffer;
  summary: ReliableSummary;
  /** `warnings`: codes but `ignored_server_event`; `allWarnings`: every code. */
  events: { retry: number; resumed: number; discontinuity: number; warnings: string[]; allWarnings: string[] };
}

/** open, send every segment, end; collect the audio in order. */
export async function run(s: ReliableSession, segments: SegmentInput[] = SEGMENTS): Promise<RunResult> {
  const chunks: Buffer[] = [];
  const events = { retry: 0, resumed: 0, discontinuity: 0, warnings: [] as string[], allWarnings: [] as string[] };
  s.on('audio', (c) => chunks.push(c.data));
  s.on('retry', () => events.retry++);
  s.on('resumed', () => events.resumed++);
  s.on('discontinuity', () => events.discontinuity++);
  // A deployment's own extra events (the `alt` dialect sends some) are one
  // informational warning, not a problem of the request.
  s.on('warning', (w) => {
    events.allWarnings.push(w.code);
    if (w.code !== 'ignored_server_event') events.warnings.push(w.code);
  });
  await s.open();
  const sends = segments.map((seg) => s.send(seg));
  const summary = await s.end();
  await Promise.all(sends);
  return { audio: Buffer.concat(chunks), summary, events };
}
