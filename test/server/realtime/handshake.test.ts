/** `/v2/tts/live` handshake (spec 5.5): refusals are HTTP responses before 101; `authenticated` comes first. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, PROTOCOL_VERSION } from '../../../src/protocol/constants.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { cleanUp, KEY_A, startTestServer } from './fixtures.js';
import { allowKeyInUrls } from '../../setup/secret-scan.js';

// These tests put a key in a URL on purpose, to show the server refuses it there.
allowKeyInUrls(/[?&](token|api_key)=sk-/);

let server: ReferenceServer;
const clients: RealtimeTestClient[] = [];

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(() => cleanUp(server, clients));

describe('realtime handshake', () => {
  it('accepts a Bearer key with the subprotocol and sends authenticated first', async () => {
    const client = await RealtimeTestClient.connect(server.wsUrl, { apiKey: KEY_A });
    clients.push(client);
    expect(client.ws.protocol).toBe('realtime.tts.msgpack.v2');
    const auth = await client.next('authenticated');
    expect(client.events[0]).toBe(auth);
    expect(auth).toMatchObject({ site: 'local', protocol_version: PROTOCOL_VERSION, quota: 1_000_000 });
    expect(auth.session_id).toMatch(/^sess_/);
    expect(typeof auth.event_id).toBe('string');
    expect(typeof auth.trace_id).toBe('string');
    expect(Math.abs(auth.timestamp - Date.now())).toBeLessThan(60_000);
  });

  it.each([
    ['no subprotocol', { apiKey: KEY_A, protocols: [] }, 400, 'invalid_request'],
    ['another subprotocol only', { apiKey: KEY_A, protocols: ['realtime.tts.msgpack.v1'] }, 400, 'invalid_request'],
    ['an unknown key', { apiKey: 'sk-not-a-key' }, 401, 'unauthorized'],
    ['a malformed Authorization header', { headers: { Authorization: 'Basic abc' } }, 401, 'unauthorized'],
    ['a key in ?token=', { query: `?token=${KEY_A}` }, 401, 'unauthorized'],
    ['a key in ?api_key= next to a valid header', { apiKey: KEY_A, query: `?api_key=${KEY_A}` }, 401, 'unauthorized'],
  ])('refuses %s before 101', async (_name, options, status, code) => {
    const refusal = await RealtimeTestClient.refused(server.wsUrl, options);
    expect(refusal.status).toBe(status);
    expect(refusal.body.error?.code).toBe(code);
    // The key never comes back in an error message.
    expect(JSON.stringify(refusal.body)).not.toContain(KEY_A);
  });

  it('names the missing subprotocol in the 400 body', async () => {
    const refusal = await RealtimeTestClient.refused(server.wsUrl, { apiKey: KEY_A, protocols: [] });
    expect(refusal.body.error?.message).toContain('realtime.tts.msgpack.v2');
  });

  it('refuses new upgrades with 503 while draining', async () => {
    server.ctx.draining = true;
    const refusal = await RealtimeTestClient.refused(server.wsUrl, { apiKey: KEY_A });
    expect(refusal.status).toBe(503);
    expect(refusal.headers['retry-after']).toBe('1');
  });

  it('accepts a connection without Authorization, which must then authenticate by ticket', async () => {
    const client = await RealtimeTestClient.connect(server.wsUrl, {});
    clients.push(client);
    client.send({ event: 'ping', event_id: 'p1' });
    const error = await client.next('error');
    expect(error).toMatchObject({ code: ErrorCode.authenticationRequired, terminal: true });
    expect((await client.closed).code).toBe(1008);
    expect(client.all('pong')).toHaveLength(0);
  });

  it('closes with authentication_required when no auth frame arrives in time', async () => {
    await server.close();
    server = await startTestServer({ authTimeoutMs: 200 });
    const client = await RealtimeTestClient.connect(server.wsUrl, {});
    clients.push(client);
    const error = await client.next('error');
    expect(error).toMatchObject({ code: ErrorCode.authenticationRequired, terminal: true, retryable: false });
    expect((await client.closed).code).toBe(1008);
  });
});
