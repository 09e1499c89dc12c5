/** Browser tickets (spec 4.10, 5.5): single use, short-lived, bound to site, Host and Origin. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, REALTIME_PATHS } from '../../../src/protocol/constants.js';
import type { ReferenceServer } from '../../../src/server/index.js';
import { RealtimeTestClient } from '../../helpers/realtime-client.js';
import { cleanUp, KEY_A, startTestServer, USER_A } from './fixtures.js';

let server: ReferenceServer;
const clients: RealtimeTestClient[] = [];
const ORIGIN = 'https://app.example.com';

beforeEach(async () => {
  server = await startTestServer();
});
afterEach(() => cleanUp(server, clients));

async function issueTicket(origin = ORIGIN, apiKey: string | null = KEY_A): Promise<Response> {
  return fetch(`${server.rtHttpUrl}${REALTIME_PATHS.browserTickets}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: JSON.stringify({ origin }),
  });
}

async function ticket(): Promise<string> {
  const res = await issueTicket();
  expect(res.status).toBe(200);
  return ((await res.json()) as { ticket: string }).ticket;
}

async function connectWithTicket(token: string, origin = ORIGIN): Promise<RealtimeTestClient> {
  const client = await RealtimeTestClient.connect(server.wsUrl, { headers: { Origin: origin } });
  clients.push(client);
  client.send({ event: 'auth', event_id: 'a1', token });
  return client;
}

describe('browser tickets', () => {
  it('issues a ticket bound to the origin, valid for about 60 s', async () => {
    const res = await issueTicket();
    const body = (await res.json()) as { ticket: string; expires_at: string; site: string; origin: string };
    expect(body.site).toBe('local');
    expect(body.origin).toBe(ORIGIN);
    expect(body.ticket).not.toContain(KEY_A);
    const ttl = Date.parse(body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(30_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('needs the Bearer key and a plain origin', async () => {
    expect((await issueTicket(ORIGIN, null)).status).toBe(401);
    expect((await issueTicket('https://app.example.com/page')).status).toBe(400);
    expect((await issueTicket('ftp://app.example.com')).status).toBe(400);
  });

  it('authenticates a connection once: authenticated replies to the auth frame', async () => {
    const token = await ticket();
    const client = await connectWithTicket(token);
    const auth = await client.next('authenticated');
    expect(auth.in_reply_to).toBe('a1');
    expect(auth.quota).toBe(server.ctx.store.accounts.get(USER_A)!.apiQuota);
    client.send({ event: 'ping', event_id: 'p1' });
    expect((await client.next('pong')).in_reply_to).toBe('p1');
  });

  it('refuses a ticket used a second time', async () => {
    const token = await ticket();
    const first = await connectWithTicket(token);
    await first.next('authenticated');
    const second = await connectWithTicket(token);
    expect(await second.next('error')).toMatchObject({ code: ErrorCode.authenticationFailed, terminal: true });
    expect((await second.closed).code).toBe(1008);
    expect(second.all('authenticated')).toHaveLength(0);
  });

  it('refuses a ticket from another origin, and that attempt uses it up', async () => {
    const token = await ticket();
    const wrong = await connectWithTicket(token, 'https://evil.example.com');
    expect(await wrong.next('error')).toMatchObject({ code: ErrorCode.authenticationFailed, terminal: true });
    expect((await wrong.closed).code).toBe(1008);
    const right = await connectWithTicket(token);
    expect(await right.next('error')).toMatchObject({ code: ErrorCode.authenticationFailed });
  });

  it('refuses a ticket on another Host', async () => {
    const token = await ticket();
    const client = await RealtimeTestClient.connect(server.wsUrl, { headers: { Origin: ORIGIN, Host: `other.example:${server.port}` } });
    clients.push(client);
    client.send({ event: 'auth', token });
    expect(await client.next('error')).toMatchObject({ code: ErrorCode.authenticationFailed });
  });

  it('refuses an expired ticket', async () => {
    const token = await ticket();
    const stored = server.ctx.store.collection<{ expiresAtMs: number }>('realtime-tickets').get(token)!;
    stored.expiresAtMs = Date.now() - 1;
    const client = await connectWithTicket(token);
    const error = await client.next('error');
    expect(error).toMatchObject({ code: ErrorCode.authenticationFailed });
    expect(error.message).toContain('expired');
  });

  it('refuses an unknown token', async () => {
    const client = await connectWithTicket('tkt_made_up');
    expect(await client.next('error')).toMatchObject({ code: ErrorCode.authenticationFailed, terminal: true });
  });

  it('answers an auth frame on a Bearer connection with already_authenticated, non-terminal', async () => {
    const client = await RealtimeTestClient.connect(server.wsUrl, { apiKey: KEY_A });
    clients.push(client);
    await client.next('authenticated');
    client.send({ event: 'auth', event_id: 'a1', token: await ticket() });
    expect(await client.next('error')).toMatchObject({ code: ErrorCode.alreadyAuthenticated, terminal: false, in_reply_to: 'a1' });
    client.send({ event: 'ping', event_id: 'p1' });
    await client.next('pong');
  });
});
