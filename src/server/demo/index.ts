/**
 * The browser demo (`voxpipe serve --demo`, off unless asked for): a page at
 * `/demo` that speaks through the browser build of the client, and the
 * small "app server" it needs, played by this server for one account:
 * - `POST /demo/ticket` mints a single-use browser ticket for the page's
 *   Origin and this Host (what an app's server does with `mintTicket`),
 * - `GET /demo/status/{id}` reads the request-status route with the key (the
 *   browser never holds it), for the resume path,
 * - `POST /demo/drop` arms a close 1012 after the next audio frames, so the
 *   page can show a resume,
 * - `GET /demo/config` says where the realtime service is and which voice.
 * The page and the bundle are static; the bundle comes from `dist/browser`
 * (`npm run build`).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { defaultVoice } from '../../discovery.js';
import { DEFAULT_MODEL, REALTIME_PATHS } from '../../protocol/constants.js';
import type { ServerContext } from '../context.js';
import { ApiErrorCode, badRequest, HttpError } from '../http/errors.js';
import { defineRoute, type RouteDef } from '../http/router.js';
import type { ServerModule } from '../module.js';
import { normalizeOrigin, TicketBook } from '../realtime/tickets.js';
import type { Account } from '../store/types.js';
import { DEMO_PAGE } from './page.js';

export const DEMO_PATH = '/demo';

/** `dist/browser` of this package, from `src/server/demo` or `dist/server/demo` alike. */
const BUNDLE_DIR = fileURLToPath(new URL('../../../dist/browser/', import.meta.url));
const BUNDLE_FILES: Record<string, string> = { 'voxpipe.js': 'voxpipe.js', 'pcm-worklet.js': 'pcm-worklet.js' };

export interface DemoOptions {
  /** The account the page speaks for. */
  apiKey: string;
}

export function createDemoModule(ctx: ServerContext, options: DemoOptions): ServerModule {
  const tickets = new TicketBook(ctx);
  const account = (): Account => {
    for (const a of ctx.store.accounts.values()) if (a.apiKey === options.apiKey) return a;
    throw new HttpError(503, ApiErrorCode.internalError, 'the demo account is gone');
  };
  const config = () => ({ apiKey: options.apiKey, baseUrl: ctx.urls.baseUrl, rootUrl: ctx.urls.rootUrl, wsUrl: ctx.urls.wsUrl, rtHttpUrl: ctx.urls.rtHttpUrl });
  const noStore = { 'cache-control': 'no-store' };

  const routes: RouteDef<never, never>[] = [
    defineRoute({
      method: 'GET',
      path: DEMO_PATH,
      summary: 'Browser demo page',
      tags: ['demo'],
      auth: false,
      hidden: true,
      handler: () => ({ body: DEMO_PAGE, headers: { 'content-type': 'text/html; charset=utf-8', ...noStore } }),
    }),
    defineRoute({
      method: 'GET',
      path: `${DEMO_PATH}/config`,
      summary: 'Where the demo page speaks',
      tags: ['demo'],
      auth: false,
      hidden: true,
      async handler() {
        const voiceId = await defaultVoice(config(), DEFAULT_MODEL);
        return { json: { wsUrl: ctx.urls.wsUrl, model: DEFAULT_MODEL, voiceId, engine: ctx.engine.name } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${DEMO_PATH}/ticket`,
      summary: 'A browser ticket for the demo page',
      tags: ['demo'],
      auth: false,
      hidden: true,
      handler({ req }) {
        const origin = normalizeOrigin(String(req.headers.origin ?? ''));
        if (origin === undefined) throw badRequest('the demo mints tickets for a page with an Origin header');
        const host = req.headers.host;
        if (!host) throw badRequest('missing Host header');
        const record = tickets.issue(account(), host, origin);
        return { json: { ticket: record.ticket, expires_at: new Date(record.expiresAtMs).toISOString() }, headers: noStore };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${DEMO_PATH}/status/{requestId}`,
      summary: 'The request status, read with the key for the page',
      tags: ['demo'],
      auth: false,
      hidden: true,
      async handler({ params }) {
        const id = params['requestId'] ?? '';
        const res = await fetch(`${ctx.urls.rtHttpUrl}${REALTIME_PATHS.requests}/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${options.apiKey}` } });
        return { status: res.status, body: await res.text(), headers: { 'content-type': res.headers.get('content-type') ?? 'application/json', ...noStore } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${DEMO_PATH}/drop`,
      summary: 'Close the next realtime connection with 1012 after a few audio frames',
      tags: ['demo'],
      auth: false,
      hidden: true,
      handler() {
        ctx.faults.set({ realtimeClose: { afterAudioFrames: 3, code: 1012 } });
        return { json: { armed: 'realtimeClose 1012 after 3 audio frames' } };
      },
    }),
    // Last: the literal routes above win over this pattern.
    defineRoute({
      method: 'GET',
      path: `${DEMO_PATH}/{file}`,
      summary: 'Browser bundle of the demo',
      tags: ['demo'],
      auth: false,
      hidden: true,
      async handler({ params }) {
        const file = BUNDLE_FILES[params['file'] ?? ''];
        if (!file) throw new HttpError(404, ApiErrorCode.notFound, `no demo file ${params['file']}`);
        const body = await readFile(BUNDLE_DIR + file).catch(() => undefined);
        if (!body) throw new HttpError(503, ApiErrorCode.internalError, 'the browser bundle is not built: run npm run build');
        return { body, headers: { 'content-type': 'text/javascript; charset=utf-8', ...noStore } };
      },
    }),
  ] as RouteDef<never, never>[];
  return { routes };
}
