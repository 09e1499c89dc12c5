/**
 * Profile (spec 2.1, 4.9): `GET /profile` and `POST /profile`.
 *
 * Decisions:
 * - `GET` is a lightweight read: it answers 200 whatever the balance (no 402).
 * - `POST` takes `webhookUrl` (an http(s) URL, publicly reachable unless the
 *   server allows private URLs; `null` removes it) and optionally
 *   `rotateWebhookSecret`. Unknown fields are rejected with 400 so a typo
 *   (`webhook_url`) or a server-controlled field (`credits`) never passes
 *   silently.
 * - The webhook signing secret is shown in full only in the response of a
 *   `POST` that sets a webhook URL (field `webhookSecret`); `GET` shows only
 *   `webhookSecretHint` (its last characters). Lost it? POST the URL again;
 *   `rotateWebhookSecret: true` issues a new one.
 */
import type { ServerContext } from '../../context.js';
import { newId } from '../../context.js';
import { badRequest } from '../../http/errors.js';
import { defineRoute, type RouteDef } from '../../http/router.js';
import type { Account } from '../../store/types.js';
import { checkPublicUrl, PublicUrlError } from '../../net/public-url.js';
import { accountErrors } from './docs.js';
import { profileResponse, profileUpdateBody, type ProfileUpdateBody } from './schemas.js';
import { REST_ROUTES, serverPath } from '../../../protocol/rest.js';

export const PROFILE_PATH = serverPath(REST_ROUTES.profile);

/** Characters of the secret shown by the hint. */
const HINT_CHARS = 4;

/** The profile of spec 2.1 plus the webhook fields. */
export function profileView(account: Account): Record<string, unknown> {
  return {
    user_id: account.userId,
    api_quota_remaining: account.apiQuota,
    tier: account.tier,
    credits: account.credits,
    webhookUrl: account.webhookUrl ?? null,
    webhookSecretHint: `${account.webhookSecret.split('_')[0]}_...${account.webhookSecret.slice(-HINT_CHARS)}`,
  };
}

export function profileRoutes(ctx: ServerContext): RouteDef<never, never>[] {
  return [
    defineRoute({
      method: 'GET',
      path: PROFILE_PATH,
      summary: 'Account profile: user id, tier, credits, remaining API quota, webhook URL',
      tags: ['account'],
      responses: { 200: { description: 'Profile', schema: profileResponse }, ...accountErrors(401) },
      handler: ({ account }) => ({ json: profileView(account) }),
    }),
    defineRoute<ProfileUpdateBody, unknown>({
      method: 'POST',
      path: PROFILE_PATH,
      summary: 'Set the webhook URL (and optionally rotate the webhook signing secret)',
      tags: ['account'],
      body: profileUpdateBody,
      responses: { 200: { description: 'The updated profile; webhookSecret in full when a webhookUrl is set', schema: profileResponse }, ...accountErrors(400, 401) },
      handler: async ({ account, body }) => {
        let webhookUrl: string | undefined;
        if (body.webhookUrl !== null) {
          try {
            // A host that does not resolve right now is accepted: deliveries fail and are retried until it does.
            webhookUrl = (await checkPublicUrl(body.webhookUrl, { allowPrivate: ctx.allowPrivateUrls, acceptUnresolvable: true })).toString();
          } catch (err) {
            if (err instanceof PublicUrlError) throw badRequest(`webhookUrl ${err.message}`);
            throw err;
          }
        }
        account.webhookUrl = webhookUrl;
        if (body.rotateWebhookSecret) account.webhookSecret = newId('whsec');
        ctx.store.accounts.set(account.userId, account);
        return { json: { ...profileView(account), ...(webhookUrl !== undefined ? { webhookSecret: account.webhookSecret } : {}) } };
      },
    }),
  ] as unknown as RouteDef<never, never>[];
}
