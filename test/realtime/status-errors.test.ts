/**
 * The status route's failed reads are
 * parsed as every REST answer is, so the same answer has the same code on
 * every path (a 401 is `unauthorized` whether the REST client or the status
 * route met it) and a non-JSON body is one line.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthenticationError, InternalServerError } from '../../src/errors.js';
import { HttpClient } from '../../src/http/client.js';
import { fetchRequestStatus, fetchSegmentAudio } from '../../src/realtime/status-client.js';
import { startFakeServer, type FakeServer } from '../http/fake-server.js';

const KEY = 'sk-status-errors-0123456789';
let server: FakeServer;
beforeEach(async () => {
  server = await startFakeServer();
});
afterEach(() => server.close());

describe('status route errors, parsed as the REST client parses them', () => {
  it('a 401 without a code in its body is unauthorized on the status route as on the REST client', async () => {
    server.handle((_req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('Unauthorized');
    });
    const status = await fetchRequestStatus('req-1', { rtHttpUrl: server.origin, apiKey: KEY });
    expect(status.kind).toBe('error');
    const fromStatus = (status as { error: unknown }).error;
    const fromRest = await new HttpClient({ apiKey: KEY, baseUrl: server.baseUrl, maxRetries: 0 }).json({ path: '/profile' }).catch((e: unknown) => e);
    expect(fromStatus).toBeInstanceOf(AuthenticationError);
    expect(fromRest).toBeInstanceOf(AuthenticationError);
    expect((fromStatus as AuthenticationError).code).toBe('unauthorized');
    expect((fromStatus as AuthenticationError).code).toBe((fromRest as AuthenticationError).code);
  });

  it('an HTML 500 from a segment download is one line', async () => {
    server.handle((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('<html>\n<body>\n<h1>502 Bad Gateway</h1>\n</body>\n</html>\n');
    });
    const audio = await fetchSegmentAudio('/audio/seg-1', { rtHttpUrl: server.origin, apiKey: KEY });
    const error = (audio as { error: Error }).error;
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.message).toBe('GET /audio/seg-1 failed with HTTP 500 (text/html): 502 Bad Gateway');
  });

  it('the key goes to the realtime origin only: an audio URL on another host, or a redirect there, gets none', async () => {
    const other = await startFakeServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/pcm' });
      res.end(Buffer.from([1, 2, 3, 4]));
    });
    try {
      server.handle((req, res) => {
        if (req.url === '/elsewhere') res.writeHead(302, { location: `${other.origin}/moved.pcm` }).end();
        else res.writeHead(200, { 'content-type': 'audio/pcm' }).end(Buffer.from([5, 6]));
      });
      expect(await fetchSegmentAudio('/own.pcm', { rtHttpUrl: server.origin, apiKey: KEY })).toEqual({ kind: 'ok', data: new Uint8Array([5, 6]) });
      expect(await fetchSegmentAudio(`${other.origin}/foreign.pcm`, { rtHttpUrl: server.origin, apiKey: KEY })).toEqual({ kind: 'ok', data: new Uint8Array([1, 2, 3, 4]) });
      expect(await fetchSegmentAudio('/elsewhere', { rtHttpUrl: server.origin, apiKey: KEY })).toMatchObject({ kind: 'ok' });
      expect(server.requests.map((r) => [r.url, r.headers.authorization])).toEqual([
        ['/own.pcm', `Bearer ${KEY}`],
        ['/elsewhere', `Bearer ${KEY}`],
      ]);
      expect(other.requests.map((r) => [r.url, r.headers.authorization])).toEqual([
        ['/foreign.pcm', undefined],
        ['/moved.pcm', undefined],
      ]);
    } finally {
      await other.close();
    }
  });
});
