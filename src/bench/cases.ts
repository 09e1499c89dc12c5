/**
 * The case matrix of `voxpipe bench`: every combination of transport,
 * format, model, voice, text length, concurrency and variant (cold or warm)
 * that the service says it supports. A combination it does not support is
 * listed as skipped with the reason, never run into errors.
 */
import type { AudioFormat } from '../protocol/audio.js';
import { defaultModel, type BenchCapabilities, type BenchModel } from './capabilities.js';
import type { BenchTextName } from './texts.js';

/** What carries the speech in a case. */
export const BenchTransport = {
  realtimeReliable: 'realtime-reliable',
  realtimeSimple: 'realtime-simple',
  sync: 'sync',
  compat: 'compat',
  async: 'async',
} as const;
export type BenchTransport = (typeof BenchTransport)[keyof typeof BenchTransport];
export const BENCH_TRANSPORTS: readonly BenchTransport[] = Object.values(BenchTransport);

/**
 * Transports run when none are named. `async` is left out: its time to first
 * audio is the job polling interval (3 s by spec 8), so 20 runs of it take
 * minutes; ask for it with `--transports all` or by name.
 */
export const DEFAULT_BENCH_TRANSPORTS: readonly BenchTransport[] = [
  BenchTransport.realtimeReliable,
  BenchTransport.realtimeSimple,
  BenchTransport.sync,
  BenchTransport.compat,
];

/**
 * `cold`: the timer starts before any connection exists, so the time to
 * first audio includes connecting (reported on its own as `connectMs` too);
 * HTTP requests go out on new TCP connections. `warm`: the stream is open
 * (realtime: authenticated and `ready`; HTTP: a keep-alive connection from a
 * previous request) before the timer starts when the text is written.
 */
export const Variant = { cold: 'cold', warm: 'warm' } as const;

/** Measured runs per case when not given. */
export const DEFAULT_RUNS = 20;
/** Discarded warm-up runs per case when not given. */
export const DEFAULT_WARMUP = 3;
/** Longest a run may take before its streams are aborted, when not given. */
export const DEFAULT_RUN_TIMEOUT_MS = 120_000; // 2 min: a long text over async HTTP polls for a while
export type Variant = (typeof Variant)[keyof typeof Variant];

/** What to sweep over. */
export interface CaseAxes {
  transports: readonly BenchTransport[];
  /** Formats, or `all` of each model's. */
  formats: readonly AudioFormat[] | 'all';
  /** Model ids, `default`, or `all`. */
  models: readonly string[] | 'default' | 'all';
  /** Voice ids, `first` (each model's first public voice), or `all`. */
  voices: readonly string[] | 'first' | 'all';
  texts: readonly BenchTextName[];
  concurrency: readonly number[];
  variants: readonly Variant[];
}

/** One case: everything a run needs to know. */
export interface BenchCase {
  /** Unique, readable label, e.g. `realtime-reliable pcm short c1 warm`. */
  id: string;
  transport: BenchTransport;
  format: AudioFormat;
  model: string;
  voiceId: string;
  voiceName?: string;
  text: BenchTextName;
  /** Streams running at once in each run. */
  concurrency: number;
  variant: Variant;
}

export interface SkippedCase {
  id: string;
  reason: string;
}

/** Formats a transport can produce for a model (the compatible route has no opus). */
function transportFormats(transport: BenchTransport, model: BenchModel): readonly AudioFormat[] {
  if (transport === BenchTransport.compat) return model.formats.filter((f) => f !== 'opus');
  return model.formats;
}

function pickModels(axes: CaseAxes, caps: BenchCapabilities, skipped: SkippedCase[]): BenchModel[] {
  if (axes.models === 'all') return caps.models;
  if (axes.models === 'default') {
    const m = defaultModel(caps);
    return m ? [m] : [];
  }
  const out: BenchModel[] = [];
  for (const id of axes.models) {
    const m = caps.models.find((x) => x.id === id);
    if (m) out.push(m);
    else skipped.push({ id: `model ${id}`, reason: 'not listed by the capabilities route' });
  }
  return out;
}

function pickVoices(axes: CaseAxes, model: BenchModel, skipped: SkippedCase[]): { id: string; name?: string }[] {
  if (axes.voices === 'all') return model.voices;
  if (axes.voices === 'first') return model.voices.slice(0, 1);
  const out: { id: string; name?: string }[] = [];
  for (const id of axes.voices) {
    const v = model.voices.find((x) => x.id === id || x.name?.toLowerCase() === id.toLowerCase());
    if (v) out.push(v);
    else skipped.push({ id: `${model.id} voice ${id}`, reason: 'voice not listed for this model' });
  }
  return out;
}

/**
 * Expand the axes into cases, in a stable order. The label names only the
 * axes that vary (model and voice appear when more than one is swept).
 */
export function expandCases(axes: CaseAxes, caps: BenchCapabilities): { cases: BenchCase[]; skipped: SkippedCase[] } {
  const skipped: SkippedCase[] = [];
  const models = pickModels(axes, caps, skipped);
  const combos: Omit<BenchCase, 'id'>[] = [];
  for (const model of models) {
    const voices = pickVoices(axes, model, skipped);
    if (voices.length === 0 && axes.voices !== 'all' && axes.voices !== 'first') continue;
    if (voices.length === 0) skipped.push({ id: `model ${model.id}`, reason: 'no public voice listed' });
    for (const transport of axes.transports) {
      const supported = transportFormats(transport, model);
      const formats = axes.formats === 'all' ? supported : axes.formats;
      for (const format of formats) {
        if (!supported.includes(format)) {
          skipped.push({ id: `${transport} ${format} ${model.id}`, reason: `${transport === BenchTransport.compat && format === 'opus' ? 'the compatible route has no opus' : `model ${model.id} does not list ${format}`}` });
          continue;
        }
        for (const voice of voices) {
          for (const text of axes.texts) {
            for (const concurrency of axes.concurrency) {
              for (const variant of axes.variants) {
                combos.push({
                  transport,
                  format,
                  model: model.id,
                  voiceId: voice.id,
                  ...(voice.name !== undefined && { voiceName: voice.name }),
                  text,
                  concurrency,
                  variant,
                });
              }
            }
          }
        }
      }
    }
  }
  const manyModels = new Set(combos.map((c) => c.model)).size > 1;
  const manyVoices = new Set(combos.map((c) => c.voiceId)).size > 1;
  const cases = combos.map((c) => {
    const parts: string[] = [c.transport, c.format];
    if (manyModels) parts.push(c.model);
    if (manyVoices) parts.push(c.voiceName ?? c.voiceId.slice(0, 8));
    parts.push(c.text, `c${c.concurrency}`, c.variant);
    return { id: parts.join(' '), ...c };
  });
  return { cases, skipped };
}
