/**
 * `--voice` takes a voice's id or, when it is not one, its name: the one
 * voice whose name is that (case-insensitive), else a typed error naming the
 * candidates (several voices of that name) or saying there is none.
 */
import { VoxpipeError } from '../errors.js';
import type { ServiceConfig } from '../config.js';

/** How a name was read: `voice_not_found` (none) or `invalid_arguments` (several, listed). */
/** The shape of a voice UUID. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function resolveVoice(config: ServiceConfig, given: string): Promise<string> {
  // A UUID is an id (public voices have them, spec 4.10): no list to read, no request spent.
  if (UUID.test(given)) return given;
  const { listVoices } = await import('../discovery.js');
  // A deployment without a voices route: pass what was given on, and let the service say.
  const voices = await listVoices(config).catch(() => []);
  if (voices.length === 0 || voices.some((v) => v.voiceId === given)) return given;
  const wanted = given.trim().toLowerCase();
  const named = voices.filter((v) => typeof v.raw['name'] === 'string' && (v.raw['name'] as string).trim().toLowerCase() === wanted);
  if (named.length === 1) return named[0]!.voiceId;
  if (named.length > 1) {
    const list = named.map((v) => `${v.voiceId} (${[v.type, v.raw['language']].filter((x) => typeof x === 'string').join(', ') || 'voice'})`).join('; ');
    throw new VoxpipeError('invalid_arguments', `--voice ${JSON.stringify(given)} names ${named.length} voices: ${list}; give one id`);
  }
  // A name one or two letters off one of them: a typo, said before any request is spent.
  const near = voices
    .map((v) => ({ v, name: typeof v.raw['name'] === 'string' ? (v.raw['name'] as string).trim() : '' }))
    .filter(({ name }) => name !== '' && editDistance(name.toLowerCase(), wanted) <= Math.min(2, Math.floor(wanted.length / 3)));
  if (near.length > 0) {
    const names = [...new Set(near.map(({ name }) => JSON.stringify(name)))].join(' or ');
    throw new VoxpipeError('voice_not_found', `--voice ${JSON.stringify(given)} is neither a voice's id nor its name here; did you mean ${names}? (voxpipe voices lists the voices)`);
  }
  // Neither an id nor a name we know: the service's own answer names the problem (voice_not_found), id-shaped or not.
  return given;
}

/** Levenshtein distance (insertions, deletions, substitutions), for names of a few words. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
