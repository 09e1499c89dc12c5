/**
 * "Is there a voxpipe service at this URL at all?", asked after a failure
 * that a wrong `VOXPIPE_BASE_URL` would also give (a 404, a voice or model
 * not found): when the routes every deployment has (spec 4: profile, usage,
 * voices) all answer 404, the URL is named as the problem instead.
 */
import { VoxpipeError } from '../errors.js';

/** Failures a base URL with no service behind it produces. */
const SUSPECT: ReadonlySet<string> = new Set(['not_found', 'voice_not_found', 'model_not_found']);

/** The failure to report: `err`, or `not_a_deployment` when nothing at the base URL answers the service's routes. */
export async function explainMissingDeployment(err: unknown, env: NodeJS.ProcessEnv): Promise<unknown> {
  const base = env['VOXPIPE_BASE_URL']?.replace(/\/+$/, '');
  if (!base || !(err instanceof VoxpipeError) || !SUSPECT.has(err.code)) return err;
  const key = env['VOXPIPE_API_KEY'];
  const statuses = await Promise.all(
    ['/profile', '/usage', '/voices'].map((path) =>
      fetch(`${base}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {}, signal: AbortSignal.timeout(3_000) }).then(
        async (res) => {
          await res.body?.cancel().catch(() => undefined);
          return res.status;
        },
        () => undefined,
      ),
    ),
  );
  if (!statuses.every((s) => s === 404)) return err;
  return new VoxpipeError('not_a_deployment', `no deployment of the service at ${base} (its profile, usage and voices routes all answer 404); check VOXPIPE_BASE_URL: it names the API's base, e.g. https://host/api/open/v1`, { cause: err });
}
