/** The one backoff of voxpipe lives in `src/backoff.ts`; realtime re-exports it. */
export * from '../backoff.js';
