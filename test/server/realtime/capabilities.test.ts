/** `GET /v2/tts/capabilities`: the matrix, limits, modes and PCM metadata, listing only what works. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL, REALTIME_PATHS } from '../../../src/protocol/constants.js';
import { LIMITS } from '../../../src/protocol/limits.js';
import { MODELS, modelFormats, voicesForModel } from '../../../src/server/catalog.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import { getJson, startTestServer } from './fixtures.js';

interface Caps {
  site: string;
  protocol_version: number;
  modes: string[];
  default_model: string;
  providers: { id: string; parameters: string[]; models: { id: string; formats: string[]; voices: { voice_id: string }[] }[] }[];
  limits: Record<string, number>;
  pcm: { sample_rate: number; channels: number; bit_depth: number };
}

let server: ReferenceServer;
let caps: Caps;

beforeAll(async () => {
  server = await startTestServer();
  const res = await getJson(server, REALTIME_PATHS.capabilities, undefined);
  expect(res.status).toBe(200);
  caps = res.body as unknown as Caps;
});
afterAll(() => server.close());

describe('capabilities route', () => {
  it('needs no key and names site, protocol and modes', () => {
    expect(caps.site).toBe('local');
    expect(caps.protocol_version).toBe(2);
    expect(caps.modes).toEqual(['simple', 'reliable']);
    expect(caps.default_model).toBe(DEFAULT_MODEL);
  });

  it('lists the default model and two models of other providers', () => {
    const models = caps.providers.flatMap((p) => p.models.map((m) => ({ provider: p.id, id: m.id })));
    expect(models.map((m) => m.id)).toContain(DEFAULT_MODEL);
    expect(new Set(models.map((m) => m.provider)).size).toBe(3);
    expect(models).toHaveLength(3);
  });

  it('lists per model exactly the formats with a working encoder and the voices supporting it', () => {
    for (const provider of caps.providers) {
      for (const model of provider.models) {
        const info = MODELS.find((m) => m.id === model.id)!;
        expect(model.formats).toEqual(modelFormats(info, server.ctx.formats));
        expect(model.formats.every((f) => server.ctx.formats.includes(f as never))).toBe(true);
        expect(model.voices.map((v) => v.voice_id)).toEqual(voicesForModel(model.id).map((v) => v.voiceId));
      }
    }
  });

  it('gives the provider parameters, the limits and the engine PCM layout', () => {
    const svc = caps.providers.find((p) => p.id === 'svc')!;
    expect(svc.parameters).toEqual(['latency', 'emotion']);
    expect(caps.limits).toMatchObject({
      simple_request_max_characters: LIMITS.simpleRequestMaxChars,
      text_frame_max_characters: LIMITS.textFrameMaxChars,
      segment_max_characters: LIMITS.segmentMaxChars,
      session_max_units: LIMITS.sessionMaxUnits,
    });
    expect(caps.pcm).toMatchObject({ sample_rate: server.ctx.engine.sampleRate, channels: 1, bit_depth: 16 });
  });
});
