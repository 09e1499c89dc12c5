/**
 * Voices and voice design against a local fake serving the spec's documented
 * shapes (2.2, 2.3, 3.5b, 4.8).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type VoxpipeClient } from '../../../src/http/index.js';
import { json, startFakeServer, type FakeServer } from '../fake-server.js';

let server: FakeServer;
let client: VoxpipeClient;

beforeEach(async () => {
  server = await startFakeServer();
  client = createClient({ apiKey: 'sk-voices-test-0000', baseUrl: server.baseUrl, initialRetryDelayMs: 1 });
});
afterEach(async () => {
  await server.close();
});

describe('client.voices', () => {
  it('lists voices with their default engine model, tolerating unknown fields', async () => {
    server.handle((_req, res) => json(res, 200, { voices: [{ voiceId: 'v1', name: 'Ava', defaultEngineModelId: 'svc-s21pro-flash', extra: 1 }, { nothing: true }] }));
    const voices = await client.voices.list();
    expect(voices).toEqual([{ voiceId: 'v1', name: 'Ava', defaultEngineModelId: 'svc-s21pro-flash', raw: { voiceId: 'v1', name: 'Ava', defaultEngineModelId: 'svc-s21pro-flash', extra: 1 } }]);
  });

  it('clones from a URL as JSON, and from bytes as multipart with the boundary set by fetch', async () => {
    server.handle((_req, res) => json(res, 201, { voiceId: 'pv_1', name: 'Mine' }));
    expect((await client.voices.clone({ name: 'Mine', audioUrl: 'https://a/ref.wav' })).voiceId).toBe('pv_1');
    expect(server.requests[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ name: 'Mine', audioUrl: 'https://a/ref.wav' });

    await client.voices.clone({ name: 'Mine', audio: Buffer.from('RIFFfakewav'), fileName: 'me.wav' });
    const req = server.requests[1]!;
    expect(req.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const body = req.body.toString('latin1');
    expect(body).toContain('name="name"');
    expect(body).toContain('name="audio"; filename="me.wav"');
    expect(body).toContain('RIFFfakewav');
  });

  it('a clone without an Idempotency-Key is not resent after a 500; with one it is', async () => {
    server.handle((_req, res) => json(res, 500, { error: { code: 'internal_error', message: 'x' } }));
    await expect(client.voices.clone({ name: 'A', audioUrl: 'https://a' })).rejects.toMatchObject({ status: 500 });
    expect(server.requests).toHaveLength(1);
    server.handle((_req, res, i) => (i === 1 ? json(res, 500, { error: { code: 'internal_error', message: 'x' } }) : json(res, 201, { voiceId: 'pv_2' })));
    expect((await client.voices.clone({ name: 'A', audioUrl: 'https://a', idempotencyKey: 'k' })).voiceId).toBe('pv_2');
    expect(server.requests).toHaveLength(3);
  });

  it('deletes by id', async () => {
    server.handle((_req, res) => json(res, 200, { deleted: true }));
    expect(await client.voices.delete('pv 1')).toEqual({ deleted: true });
    expect(server.requests[0]).toMatchObject({ method: 'DELETE', url: '/api/open/v1/voices/pv%201' });
  });
});

describe('client.voiceDesigns', () => {
  it('creates with an Idempotency-Key, returns the key, candidates and billing', async () => {
    server.handle((_req, res) => json(res, 200, { designId: 'd1', candidates: [{ candidateId: 'c1', previewAudioUrl: '/api/open/v1/voice-designs/d1/candidates/c1/audio' }], billing: { credits: 10 } }));
    const design = await client.voiceDesigns.create({ prompt: 'warm baritone', previewText: 'Hello there', providers: ['svc'] });
    expect(server.requests[0]!.headers['idempotency-key']).toBe(design.idempotencyKey);
    expect(JSON.parse(server.requests[0]!.body.toString())).toEqual({ prompt: 'warm baritone', previewText: 'Hello there', providers: ['svc'] });
    expect(design).toMatchObject({ designId: 'd1', billing: { credits: 10 }, candidates: [{ candidateId: 'c1' }] });
  });

  it('fetches a preview with the key and saves a candidate as a private voice', async () => {
    server.handle((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'audio/wav' });
        return void res.end(Buffer.from('RIFF'));
      }
      return json(res, 201, { voiceId: 'pv_9' });
    });
    const preview = await client.voiceDesigns.preview('d1', 'c1');
    expect(preview.contentType).toBe('audio/wav');
    expect(server.requests[0]).toMatchObject({ url: '/api/open/v1/voice-designs/d1/candidates/c1/audio' });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-voices-test-0000');
    const saved = await client.voiceDesigns.save('d1', { candidateId: 'c1', name: 'Narrator', idempotencyKey: 'save-1' });
    expect(saved).toMatchObject({ voiceId: 'pv_9', idempotencyKey: 'save-1' });
    expect(JSON.parse(server.requests[1]!.body.toString())).toEqual({ candidateId: 'c1', name: 'Narrator', visibility: 'private' });
    expect(server.requests[1]!.headers['idempotency-key']).toBe('save-1');
  });
});
