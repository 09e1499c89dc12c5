/** The `textFingerprint` of async TTS list items (spec 2.4): `sha256:` and the hex SHA-256 of the UTF-8 text. */
import { createHash } from 'node:crypto';

export function textFingerprint(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}
