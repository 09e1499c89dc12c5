/**
 * The texts `voxpipe bench` speaks, by length. Fixed, so figures from two
 * machines or two deployments compare like for like. Plain English with
 * ordinary punctuation: the segmenter cuts the first segment at the first
 * clause or sentence boundary, as it would for an LLM reply.
 */
export const BENCH_TEXTS = {
  /** One short sentence (~50 characters): a voice-agent turn. */
  short: 'Hello! Your order has shipped and arrives Tuesday.',
  /** Three sentences (~270 characters): a typical assistant answer. */
  medium:
    'Thanks for calling. I checked your account and the payment from last week went through, ' +
    'so the balance is now zero. Your next statement will be sent on the first of the month, ' +
    'and you can always ask me to read it out. Is there anything else I can help with today?',
  /** A paragraph (~1,100 characters): long-form reading. */
  long:
    'The history of the lighthouse begins with simple fires lit on hilltops near dangerous coasts. ' +
    'Over the centuries these fires moved into towers, and the towers grew taller and brighter as ' +
    'engineers learned to focus the light with mirrors and, later, with carefully ground lenses. ' +
    'A keeper lived beside each tower, trimming the wick, winding the clockwork that turned the ' +
    'lens, and writing the weather into a logbook every few hours. In fog the keeper rang a bell ' +
    'or sounded a horn, counting the seconds between blasts so that passing ships could tell one ' +
    'station from another. Electric lamps arrived at the end of the nineteenth century, and ' +
    'automatic switches followed, until most towers no longer needed anyone to live there at all. ' +
    'Today many of them are museums, and some still shine every night, their beams sweeping the ' +
    'water exactly as they did a hundred years ago. Sailors now navigate by satellite, yet most ' +
    'of them will tell you that nothing is quite as reassuring as the steady flash of a familiar ' +
    'light on a dark and stormy night.',
} as const;

export type BenchTextName = keyof typeof BENCH_TEXTS;
export const BENCH_TEXT_NAMES = Object.keys(BENCH_TEXTS) as BenchTextName[];

/**
 * Sentences whose word timings `bench/word-timing.mjs` and the word-timing
 * test measure: the bench texts cut into sentences, as the
 * segmenter would send them, and a few with numbers, short words and lists.
 */
export const WORD_TIMING_TEXTS: readonly string[] = [
  ...Object.values(BENCH_TEXTS).flatMap((text) => text.match(/[^.!?]+[.!?]+/g) ?? []).map((s) => s.trim()),
  'At 7 in the morning, 42 people had already queued for tickets.',
  'Red, green, blue, and yellow are the colours on the old map.',
  'I am not sure it is so; we can go, or we can stay in and wait.',
  'Extraordinary circumstances demanded unprecedented international cooperation.',
  'Call me at five, then again at nine, and once more before midnight.',
  'Why would anyone build a bridge there? Nobody knows, but it still stands.',
];
