/**
 * Prices and tunables of the account module (decided here; the spec gives
 * no prices for voices). Costs are in credits, the HTTP routes' currency
 * (`../common/billing.ts`).
 */
import type { ServerContext } from '../../context.js';

/** Credits charged for cloning a voice (once, when the voice is created). */
export const CLONE_CREDITS = 500;
/** Credits charged per design candidate (a design has DESIGN_CANDIDATES of them); saving is free. */
export const DESIGN_CREDITS_PER_CANDIDATE = 100;
/** Candidates made per voice design. */
export const DESIGN_CANDIDATES = 3;
/** Default lifetime of a voice design: 1_800_000 ms (30 min). */
export const DEFAULT_DESIGN_TTL_MS = 1_800_000;
/** An expired design is answered 410 for this long, then forgotten (404): 86_400_000 ms (24 h). */
export const EXPIRED_DESIGN_GRACE_MS = 86_400_000;

/** Run-time settings of one server's account module. */
export interface AccountSettings {
  /** Lifetime of voice designs, ms; default VOXPIPE_DESIGN_TTL_MS, else DEFAULT_DESIGN_TTL_MS. */
  designTtlMs: number;
}

const settings = new WeakMap<ServerContext, AccountSettings>();

/** Settings from the environment: `VOXPIPE_DESIGN_TTL_MS` (a positive number of ms). */
export function accountSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): AccountSettings {
  const ttl = Number(env['VOXPIPE_DESIGN_TTL_MS']);
  return { designTtlMs: env['VOXPIPE_DESIGN_TTL_MS'] !== undefined && Number.isFinite(ttl) && ttl > 0 ? ttl : DEFAULT_DESIGN_TTL_MS };
}

/**
 * The mutable settings of a server's account module, read at each use (so
 * a test may shorten `designTtlMs` on a running server). Created from the
 * environment on first use.
 */
export function accountSettings(ctx: ServerContext): AccountSettings {
  let s = settings.get(ctx);
  if (!s) {
    s = accountSettingsFromEnv();
    settings.set(ctx, s);
  }
  return s;
}
