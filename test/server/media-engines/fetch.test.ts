import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchMedia, MediaFetchError } from '../../../src/server/media-engines/fetch.js';
import { checkPublicUrl, isPrivateAddress, parsePublicUrl } from '../../../src/server/net/public-url.js';

describe('isPrivateAddress', () => {
  it('flags loopback, private, link-local, CGNAT, unspecified, multicast and documentation ranges', () => {
    for (const ip of ['127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.18.0.1']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['::', '::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '2001:db8::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '[::1]', 'fe80::1%eth0']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
  });

  it('lets public unicast addresses through, and counts non-IP strings as private', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(ip), ip).toBe(false);
    expect(isPrivateAddress('example.com')).toBe(true);
  });
});

describe('parsePublicUrl and checkPublicUrl', () => {
  it('accept absolute http(s) URLs only, without credentials', async () => {
    expect(parsePublicUrl('https://cdn.example.com/a.wav?sig=abc').hostname).toBe('cdn.example.com');
    for (const [url, message] of [
      ['a.wav', /absolute http\(s\) URL/],
      ['ftp://example.com/a.wav', /http or https/],
      ['file:///etc/passwd', /http or https/],
      ['https://user:pw@example.com/a.wav', /credentials/],
      ['https://token@example.com/a.wav', /credentials/],
    ] as const) {
      expect(() => parsePublicUrl(url), url).toThrow(message);
    }
  });

  it('refuses private literals and names resolving to loopback unless allowed', async () => {
    await expect(checkPublicUrl('http://127.0.0.1/a.wav')).rejects.toMatchObject({ kind: 'private_address' });
    await expect(checkPublicUrl('http://localhost:8080/a.wav')).rejects.toMatchObject({ kind: 'private_address' });
    await expect(checkPublicUrl('http://[::1]/a.wav')).rejects.toMatchObject({ kind: 'private_address' });
    await expect(checkPublicUrl('http://8.8.8.8/a.wav')).resolves.toBeInstanceOf(URL);
    await expect(checkPublicUrl('http://localhost:8080/a.wav', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
    await expect(checkPublicUrl('http://nothing.invalid/a.wav')).rejects.toMatchObject({ kind: 'unresolvable' });
  });
});

describe('fetchMedia', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/ok') res.end('hello');
      else if (path === '/big') res.writeHead(200, { 'content-length': 5000 }).end(Buffer.alloc(5000));
      else if (path === '/chunked-big') {
        res.writeHead(200);
        res.write(Buffer.alloc(3000));
        res.end(Buffer.alloc(3000));
      } else if (path === '/hop') res.writeHead(302, { location: '/ok' }).end();
      else if (path === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else if (path === '/hang') res.writeHead(200).write('x');
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('downloads, following a redirect', async () => {
    const got = await fetchMedia(`${base}/hop`, { allowPrivate: true });
    expect(got.data.toString()).toBe('hello');
    expect(got.url).toBe(`${base}/ok`);
  });

  it('refuses a loopback server unless private URLs are allowed', async () => {
    await expect(fetchMedia(`${base}/ok`)).rejects.toMatchObject({ kind: 'private_address' });
  });

  it('reports HTTP errors, redirect loops, oversized bodies and timeouts', async () => {
    await expect(fetchMedia(`${base}/missing`, { allowPrivate: true })).rejects.toMatchObject({ kind: 'http_status', status: 404 });
    await expect(fetchMedia(`${base}/loop`, { allowPrivate: true })).rejects.toThrow(/more than 3 redirects/);
    await expect(fetchMedia(`${base}/big`, { allowPrivate: true, maxBytes: 4096 })).rejects.toMatchObject({ kind: 'too_large' });
    await expect(fetchMedia(`${base}/chunked-big`, { allowPrivate: true, maxBytes: 4096 })).rejects.toMatchObject({ kind: 'too_large' });
    const slow = await fetchMedia(`${base}/hang`, { allowPrivate: true, timeoutMs: 150 }).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(MediaFetchError);
    expect((slow as MediaFetchError).kind).toBe('timeout');
    await expect(fetchMedia('http://127.0.0.1:1/x', { allowPrivate: true })).rejects.toMatchObject({ kind: 'unreachable' });
  });
});
