/**
 * Account profile (spec 2.1, 4.9): `GET /profile` (a lightweight check, not
 * a reservation) and `POST /profile` to set the `webhookUrl`.
 */
import type { HttpClient } from '../client.js';
import { asObject, isObject, num, str, type JsonObject } from '../../protocol/fields.js';
import { REST_ROUTES } from '../../protocol/rest.js';

export const PROFILE_PATH = REST_ROUTES.profile;

export interface Profile {
  userId: string | undefined;
  tier: string | undefined;
  credits: number | undefined;
  apiQuotaRemaining: number | undefined;
  webhookUrl: string | undefined;
  /** Webhook signing secret, where the service shows it (e.g. in the response of an update that sets a URL). */
  webhookSecret: string | undefined;
  /** All fields as received (unknown ones included). */
  raw: JsonObject;
}

export function normalizeProfile(body: unknown): Profile {
  const outer = asObject(body);
  const obj = isObject(outer['profile']) ? outer['profile'] : isObject(outer['data']) ? outer['data'] : outer;
  return {
    userId: str(obj, 'user_id', 'userId'),
    tier: str(obj, 'tier'),
    credits: num(obj, 'credits'),
    apiQuotaRemaining: num(obj, 'api_quota_remaining', 'apiQuotaRemaining'),
    webhookUrl: str(obj, 'webhookUrl', 'webhook_url'),
    webhookSecret: str(obj, 'webhookSecret', 'webhook_secret'),
    raw: outer,
  };
}

export interface ProfileUpdate {
  webhookUrl: string | null;
  /** Ask for a new webhook signing secret, where the service supports it. */
  rotateWebhookSecret?: boolean;
  signal?: AbortSignal | undefined;
}

export class Profiles {
  constructor(private readonly client: HttpClient) {}

  async get(options: { signal?: AbortSignal | undefined } = {}): Promise<Profile> {
    return normalizeProfile((await this.client.json({ path: PROFILE_PATH, signal: options.signal })).data);
  }

  /**
   * Set (or with `null` remove) the webhook URL. Setting a value twice is
   * harmless, so a lost response may be resent; with `rotateWebhookSecret`
   * a resend rotates again, and the secret in the final response is the valid one.
   */
  async update({ signal, ...body }: ProfileUpdate): Promise<Profile> {
    const res = await this.client.json({ method: 'POST', path: PROFILE_PATH, body, idempotent: true, signal });
    return normalizeProfile(res.data);
  }
}
