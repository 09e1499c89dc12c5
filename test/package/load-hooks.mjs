// Module hooks that log every file URL Node loads to $LOAD_LOG (one per line).
import { appendFileSync } from 'node:fs';

export async function load(url, context, next) {
  if (url.startsWith('file:') && process.env.LOAD_LOG) appendFileSync(process.env.LOAD_LOG, `${url}\n`);
  return next(url, context);
}
