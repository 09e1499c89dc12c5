/**
 * The one "public URL" rule (spec 4.4: public URLs only, no LAN, loopback or
 * credentials) for every URL the server fetches or calls on a user's behalf:
 * media inputs, reference audio for voice cloning, webhook targets. A URL
 * must be absolute http(s), carry no `user:pass@`, and its host must be and
 * resolve to public addresses only. Callers check it when a request is
 * accepted, again on every redirect hop, and connect through
 * `guardedLookup`, so neither a redirect nor a DNS answer that changed in
 * between reaches a LAN or loopback address. `allowPrivate` (the server
 * option `allowPrivateUrls`, for local tests and the CLI's embedded server)
 * lifts the address rule only, never the form rule.
 *
 * Non-public addresses: loopback, private (RFC 1918, unique-local),
 * link-local, carrier-grade NAT, unspecified, multicast, broadcast and
 * reserved, documentation and benchmarking ranges; IPv4-mapped
 * (`::ffff:a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`) IPv6 forms are judged by
 * the IPv4 address inside them. Host names that only ever name local hosts
 * (`localhost`, `*.localhost`, `*.local`, `*.internal`) are refused without
 * a lookup.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Why a URL was refused. */
export const PublicUrlErrorKind = {
  /** Not an absolute http(s) URL, no host, or it carries credentials. */
  invalidUrl: 'invalid_url',
  /** The host is (or resolves to) a loopback, LAN or otherwise non-public address. */
  privateAddress: 'private_address',
  /** The host name does not resolve. */
  unresolvable: 'unresolvable',
} as const;
export type PublicUrlErrorKind = (typeof PublicUrlErrorKind)[keyof typeof PublicUrlErrorKind];

/** A refused URL. The message has no subject: callers put the field name before it. */
export class PublicUrlError extends Error {
  override name = 'PublicUrlError';
  constructor(readonly kind: PublicUrlErrorKind, message: string) {
    super(message);
  }
}

export interface UrlPolicy {
  /** Accept loopback, LAN and other private addresses; default false. */
  allowPrivate?: boolean | undefined;
  /**
   * Accept a host name that does not resolve right now (a create call: DNS
   * may recover before the fetch, and the fetch checks every hop again);
   * default false (a fetch refuses it).
   */
  acceptUnresolvable?: boolean | undefined;
}

/** Error code of a connection refused by `guardedLookup`. */
export const PRIVATE_LOOKUP_CODE = 'EPRIVATE';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
  ['100::', 64], // discard
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  return undefined;
}

/** Whether `address` (an IP literal, brackets and zone allowed) is not a public unicast address. Non-IP strings count as private. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== undefined) return blocked.check(v4, 'ipv4');
    return blocked.check(bare, 'ipv6');
  }
  return true;
}

/** Whether a host name only ever names a local host (refused without asking DNS). */
function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal');
}

/** The refusal of a non-public host, worded for every caller (`<field> must be publicly reachable (...)`). */
function notPublic(why: string): PublicUrlError {
  return new PublicUrlError(PublicUrlErrorKind.privateAddress, `must be publicly reachable (${why}); the service uses public URLs only`);
}

/** Host name of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Promise form of `dns.lookup` with every address. */
function lookupAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
}

/** Parse and check the form of `raw` (no DNS): absolute http(s), a host, no credentials. */
export function parsePublicUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PublicUrlError(PublicUrlErrorKind.invalidUrl, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PublicUrlError(PublicUrlErrorKind.invalidUrl, `must use http or https, not ${url.protocol.replace(':', '')}`);
  if (url.username !== '' || url.password !== '') throw new PublicUrlError(PublicUrlErrorKind.invalidUrl, 'must not carry credentials (user:password@)');
  if (bareHost(url) === '') throw new PublicUrlError(PublicUrlErrorKind.invalidUrl, 'has no host');
  return url;
}

/**
 * Check that `raw` is a URL the server may fetch or call: its form, and
 * (unless `policy.allowPrivate`) its host name and every address it
 * resolves to. Returns the parsed URL; throws PublicUrlError.
 */
export async function checkPublicUrl(raw: string, policy: UrlPolicy = {}): Promise<URL> {
  const url = parsePublicUrl(raw);
  if (policy.allowPrivate) return url;
  const host = bareHost(url);
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw notPublic(`${host} is not a public address`);
    return url;
  }
  if (isLocalName(host)) throw notPublic(`${host} names a loopback or LAN host`);
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host);
  } catch {
    if (policy.acceptUnresolvable) return url;
    throw new PublicUrlError(PublicUrlErrorKind.unresolvable, `host ${host} does not resolve`);
  }
  if (addresses.length === 0) {
    if (policy.acceptUnresolvable) return url;
    throw new PublicUrlError(PublicUrlErrorKind.unresolvable, `host ${host} does not resolve`);
  }
  if (addresses.some((a) => isPrivateAddress(a.address))) throw notPublic(`host ${host} resolves to a non-public address`);
  return url;
}

/**
 * A DNS lookup for sockets (`http.request({ lookup })`) that refuses
 * non-public answers with an error of code `EPRIVATE`, unless
 * `allowPrivate`: it defeats DNS rebinding between the check and the connect.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const list = addresses as LookupAddress[];
      if (!allowPrivate && list.some((a) => isPrivateAddress(a.address))) {
        const refused = notPublic(`host ${hostname} resolves to a non-public address`);
        callback(Object.assign(new Error(refused.message), { code: PRIVATE_LOOKUP_CODE }) as NodeJS.ErrnoException, '', 0);
        return;
      }
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
