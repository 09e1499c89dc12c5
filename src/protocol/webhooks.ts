/**
 * Webhook signatures (decided here; the spec leaves webhooks open, section 6).
 *
 * Every webhook request carries
 * `X-Voxpipe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` where the HMAC
 * is computed with the account's webhook secret over `"<t>.<raw body>"`.
 * The timestamp is part of the signed text, so a captured request cannot be
 * replayed outside the tolerance window; receivers should also drop event
 * ids (`X-Voxpipe-Event-Id`) they have already processed, since a retried
 * delivery carries the same id and body with a fresh signature.
 *
 * Pure `node:crypto`: receivers import this without the server.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying `t=<unix seconds>,v1=<hex>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Voxpipe-Signature';
/** Header carrying the event id (the same on every retry of one event). */
export const WEBHOOK_EVENT_ID_HEADER = 'X-Voxpipe-Event-Id';
/** Header carrying the event type, e.g. `task.succeeded`. */
export const WEBHOOK_EVENT_TYPE_HEADER = 'X-Voxpipe-Event-Type';
/** Header carrying the delivery attempt, from 1. */
export const WEBHOOK_ATTEMPT_HEADER = 'X-Voxpipe-Delivery-Attempt';
/** Default tolerance between the signed timestamp and the receiver's clock: 300_000 ms (5 min). */
export const WEBHOOK_TOLERANCE_MS = 300_000;

function hmacHex(secret: string, timestamp: number, body: string | Uint8Array): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestamp}.`);
  hmac.update(body);
  return hmac.digest('hex');
}

/** The signature header value for `body` signed at `timestampSec` (Unix seconds). */
export function signWebhook(secret: string, body: string | Uint8Array, timestampSec: number): string {
  return `t=${timestampSec},v1=${hmacHex(secret, timestampSec, body)}`;
}

/** `t` and every `v1` of a signature header; undefined when malformed. */
export function parseSignatureHeader(header: string): { timestampSec: number; signatures: string[] } | undefined {
  let timestampSec: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestampSec = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase());
  }
  return timestampSec === undefined || signatures.length === 0 ? undefined : { timestampSec, signatures };
}

/**
 * Whether `header` (the `X-Voxpipe-Signature` value) signs `body` (the raw
 * request body, exactly as received) with `secret`, at a timestamp within
 * `toleranceMs` (default WEBHOOK_TOLERANCE_MS) of `nowMs` (default now).
 * Compares in constant time; any `v1` entry may match (secret rotation).
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  body: string | Uint8Array,
  toleranceMs: number = WEBHOOK_TOLERANCE_MS,
  nowMs: number = Date.now(),
): boolean {
  if (!header || !secret) return false;
  const parsed = parseSignatureHeader(header);
  if (!parsed) return false;
  if (Math.abs(nowMs - parsed.timestampSec * 1000) > toleranceMs) return false;
  const expected = Buffer.from(hmacHex(secret, parsed.timestampSec, body), 'hex');
  return parsed.signatures.some((sig) => {
    const given = Buffer.from(sig, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
