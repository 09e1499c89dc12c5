import { describe, expect, it } from 'vitest';
import { expandCases, type CaseAxes } from '../../src/bench/cases.js';
import { parseCapabilities, type BenchCapabilities } from '../../src/bench/capabilities.js';

const caps: BenchCapabilities = {
  source: 'capabilities',
  models: parseCapabilities({
    providers: [
      { id: 'a', formats: ['pcm', 'wav', 'mp3', 'opus'], models: [{ id: 'm1', default: true, voices: [{ voice_id: 'v1', name: 'Ava' }, { voice_id: 'v2', name: 'Ben' }] }] },
      { id: 'b', models: [{ id: 'm2', formats: ['pcm', 'opus', 'flac'], voices: [{ voice_id: 'v3' }, { name: 'no id' }] }] },
    ],
  }),
};

const axes = (over: Partial<CaseAxes>): CaseAxes => ({
  transports: ['realtime-reliable'],
  formats: ['pcm'],
  models: 'default',
  voices: 'first',
  texts: ['short'],
  concurrency: [1],
  variants: ['warm'],
  ...over,
});

describe('bench capabilities', () => {
  it('reads models, formats (model first, provider otherwise; unknown dropped) and voices', () => {
    expect(caps.models).toEqual([
      { id: 'm1', isDefault: true, formats: ['pcm', 'wav', 'mp3', 'opus'], voices: [{ id: 'v1', name: 'Ava' }, { id: 'v2', name: 'Ben' }] },
      { id: 'm2', isDefault: false, formats: ['pcm', 'opus'], voices: [{ id: 'v3' }] },
    ]);
    expect(parseCapabilities(null)).toEqual([]);
  });
});

describe('expandCases', () => {
  it('defaults to the default model and its first voice, with short labels', () => {
    const { cases, skipped } = expandCases(axes({ variants: ['cold', 'warm'] }), caps);
    expect(skipped).toEqual([]);
    expect(cases.map((c) => c.id)).toEqual(['realtime-reliable pcm short c1 cold', 'realtime-reliable pcm short c1 warm']);
    expect(cases[0]).toMatchObject({ model: 'm1', voiceId: 'v1', voiceName: 'Ava', format: 'pcm', concurrency: 1 });
  });

  it('sweeps every model, voice and format, naming model and voice when they vary', () => {
    const { cases } = expandCases(axes({ models: 'all', voices: 'all', formats: 'all' }), caps);
    // m1: 2 voices x 4 formats; m2: 1 voice x 2 formats
    expect(cases).toHaveLength(10);
    expect(cases.map((c) => c.id)).toContain('realtime-reliable opus m2 v3 short c1 warm');
    expect(cases.map((c) => c.id)).toContain('realtime-reliable mp3 m1 Ben short c1 warm');
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
  });

  it('skips what the service does not list, with the reason, instead of running it into errors', () => {
    const { cases, skipped } = expandCases(
      axes({ transports: ['compat', 'sync'], formats: ['opus', 'mp3'], models: ['m2', 'nope'], voices: ['v3', 'zzz'] }),
      caps,
    );
    expect(cases.map((c) => c.id)).toEqual(['sync opus short c1 warm']);
    expect(skipped.map((s) => s.id)).toEqual(['model nope', 'm2 voice zzz', 'compat opus m2', 'compat mp3 m2', 'sync mp3 m2']);
    expect(skipped[2]!.reason).toMatch(/no opus/);
    expect(skipped[4]!.reason).toMatch(/does not list mp3/);
  });

  it('crosses texts, concurrency and variants', () => {
    const { cases } = expandCases(axes({ texts: ['short', 'long'], concurrency: [1, 10], variants: ['cold', 'warm'] }), caps);
    expect(cases).toHaveLength(8);
    expect(cases.filter((c) => c.concurrency === 10 && c.text === 'long').map((c) => c.variant)).toEqual(['cold', 'warm']);
  });
});
