/** `fetch` wrappers that lose responses, for replay and recovery tests. */

export type Match = (url: string, init: RequestInit | undefined) => boolean;

/**
 * The request reaches the server and is executed, but the response is lost:
 * the first `times` matching calls throw a network error after the server answered.
 */
export function losingResponses(match: Match, times = 1): typeof fetch & { lost: number } {
  const f = Object.assign(
    async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const res = await fetch(input, init);
      if (f.lost < times && match(String(input), init)) {
        f.lost++;
        await res.arrayBuffer();
        throw new TypeError('fetch failed', { cause: new Error('other side closed') });
      }
      return res;
    },
    { lost: 0 },
  );
  return f;
}

/** The first `times` matching calls fail before reaching the server. */
export function failingRequests(match: Match, times = 1): typeof fetch & { failed: number } {
  const f = Object.assign(
    async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      if (f.failed < times && match(String(input), init)) {
        f.failed++;
        throw new TypeError('fetch failed', { cause: new Error('connect ECONNRESET') });
      }
      return fetch(input, init);
    },
    { failed: 0 },
  );
  return f;
}

export const isPost = (path: string): Match => (url, init) => init?.method === 'POST' && new URL(url).pathname.endsWith(path);
