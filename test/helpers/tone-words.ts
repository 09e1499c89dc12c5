/**
 * The reference server's tone engine says each letter or digit for 70 ms and
 * each space for 40 ms, so the word boundaries of a segment without inner
 * punctuation are known exactly: the truth the heard-text tests compare with.
 */

/** The tone engine's words of `text` (no inner punctuation): [word, startMs, endMs]. */
export function toneWords(text: string): [string, number, number][] {
  const out: [string, number, number][] = [];
  let t = 0;
  for (const word of text.trim().split(' ')) {
    const end = t + word.replace(/\W/g, '').length * 70;
    out.push([word, t, end]);
    t = end + 40;
  }
  return out;
}

/** The words of `text` whose true end had played by `ms`, joined by spaces. */
export function toneHeardBy(text: string, ms: number): string {
  return toneWords(text)
    .filter(([, , end]) => end <= ms)
    .map(([w]) => w)
    .join(' ');
}
