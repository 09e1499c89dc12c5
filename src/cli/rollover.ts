/**
 * Cutting a text between sentences, for a command that splits a text itself
 * (`jobs create`: one job per part). Realtime texts of any length need no
 * cutting here: a SpeechStream moves on to a next request by itself
 * (`stream/rollover.ts`).
 */

/** The end of the last sentence within the first `max` characters of `text` (followed by whitespace, or the text's end), else 0. */
export function sentenceCut(text: string, max: number): number {
  let best = 0;
  for (const m of text.slice(0, max + 1).matchAll(/[.!?\u2026\u3002\uff01\uff1f]["'\u201d\u2019)\]]*(?=\s|$)/gu)) {
    const end = m.index + m[0].length;
    if (end <= max && (end < text.length ? /\s/u.test(text[end]!) : true)) best = end;
  }
  return best;
}

/** Where to cut `text` so the head has at most `max` characters: after a sentence end, else a space, else at `max` (never inside a surrogate pair). */
export function cutPoint(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const sentence = sentenceCut(text, max);
  if (sentence > 0) return sentence;
  const space = text.lastIndexOf(' ', max);
  if (space > 0) return space;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}
