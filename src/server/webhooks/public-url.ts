/**
 * The "public URL" rule (spec 4.4: no LAN, loopback or credentials) for URLs
 * the server fetches or calls on a user's behalf: reference audio for voice
 * cloning and webhook targets. Host names are resolved, so a name pointing
 * at a private address is refused too. `allowPrivate` (the server option
 * `allowPrivateUrls`, for local tests) lifts the address rule only.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Why a URL was refused. */
export class PublicUrlError extends Error {
  override name = 'PublicUrlError';
}

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 3], // multicast and reserved, up to 255.255.255.255
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6');
}

/** Whether an IP address (v4 or v6, IPv4-mapped included) is loopback, LAN, link-local or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * `raw` as a URL the server may call: http(s), no credentials in it, and
 * (unless `allowPrivate`) a host that is not and does not resolve to a
 * private address. `what` names the field in error messages.
 */
export async function checkPublicUrl(raw: string, allowPrivate: boolean, what = 'URL'): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PublicUrlError(`${what} is not a valid absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PublicUrlError(`${what} must use http or https`);
  if (url.username || url.password) throw new PublicUrlError(`${what} must not carry credentials`);
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    throw new PublicUrlError(`${what} must be publicly reachable (no loopback or LAN host)`);
  }
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      throw new PublicUrlError(`${what} host does not resolve`);
    }
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) throw new PublicUrlError(`${what} must be publicly reachable (no loopback or LAN address)`);
  return url;
}
