/** An abortable sleep shared by the retry loop and the job poller. */
import { AbortError } from '../errors.js';

/** Signature of the sleep function; injectable so tests record delays instead of waiting. */
export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The error to throw for an aborted signal: its reason when that is already an Error of ours. */
export function abortErrorOf(signal: AbortSignal | undefined): AbortError {
  const reason: unknown = signal?.reason;
  if (reason instanceof AbortError) return reason;
  return new AbortError('aborted', reason === undefined ? {} : { cause: reason });
}

/** Wait `ms`, rejecting with `AbortError` as soon as `signal` aborts. */
export const sleep: SleepFn = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortErrorOf(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortErrorOf(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
