/**
 * Source of the eSpeak worker thread, kept as a string and started with
 * `new Worker(ESPEAK_WORKER_SOURCE, { eval: true })`: the same code then runs
 * from `src/` under vitest and from `dist/` without a build step copying a
 * separate .js file. It is plain CommonJS JavaScript.
 *
 * Protocol (all messages are plain objects with a `type`):
 * - workerData: `{ moduleUrl, cancel, warmUpRounds }`; `cancel` is a SharedArrayBuffer
 *   holding one Int32 request id: the synthesizer runs synchronously, so the
 *   worker cannot receive a message mid-synthesis, but its callback can read
 *   shared memory and stop eSpeak.
 * - in: `{ type: 'synth', id, text, voices, rate, pitch, gain }`
 * - out: `{ type: 'ready', sampleRate }`, `{ type: 'chunk', id, pcm, words? }` (a
 *   transferred ArrayBuffer of s16 samples; `words`, when the request asked
 *   with `words: true`, eSpeak's word events in that chunk: `{ at, length, ms }`
 *   with `at` 0-based in the request's text), `{ type: 'done', id, aborted }`,
 *   `{ type: 'error', id, message, fatal }`, `{ type: 'load-failed', message }`.
 */
export const ESPEAK_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const cancel = new Int32Array(workerData.cancel);
let synth;
let currentVoice;
let languageVoices;
const resolvedVoices = new Map();
const WARM_UP_TEXT = 'The quick brown fox, 42 years old, jumps over the lazy dog! Does it? Yes: it runs away.';

function voiceForLanguage(tag) {
  if (!languageVoices) {
    languageVoices = new Map();
    for (const voice of synth.list_voices()) {
      for (const language of voice.languages) {
        const known = languageVoices.get(language.name);
        if (!known || language.priority < known.priority) {
          languageVoices.set(language.name, { identifier: voice.identifier, priority: language.priority });
        }
      }
    }
  }
  const found = languageVoices.get(tag);
  return found ? found.identifier : undefined;
}

// eSpeak's set_voice takes voice file names ('en-us', 'gmw/en-GB-x-rp'), not
// every language tag ('en-gb', 'zh'): fall back to the voice list's languages.
function setVoice(name) {
  if (name === currentVoice) return true;
  if (synth.set_voice(name) === 0) { currentVoice = name; return true; }
  const plus = name.indexOf('+');
  const base = (plus < 0 ? name : name.slice(0, plus)).toLowerCase();
  const variant = plus < 0 ? '' : name.slice(plus);
  for (const tag of [base, base.split('-')[0]]) {
    const identifier = voiceForLanguage(tag);
    if (identifier && synth.set_voice(identifier + variant) === 0) { currentVoice = name; return true; }
  }
  currentVoice = undefined;
  return false;
}

function chooseVoice(voices) {
  const key = voices.join('|');
  const known = resolvedVoices.get(key);
  if (known !== undefined && setVoice(known)) return true;
  for (const name of voices) {
    if (setVoice(name)) { resolvedVoices.set(key, name); return true; }
  }
  return false;
}

// eSpeak reads its input as SSML: escape markup so text is spoken as written.
function escapeMarkup(text) {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// For each character of the escaped text, the index of the character of 'text' it came from.
function toOrigin(text) {
  const origin = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const width = c === '&' ? 5 : c === '<' || c === '>' ? 4 : 1;
    for (let k = 0; k < width; k++) origin.push(i);
  }
  return origin;
}

function applyGain(samples, gain) {
  for (let i = 0; i < samples.length; i++) {
    const value = Math.round(samples[i] * gain);
    samples[i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
  }
}

function run(request) {
  if (!chooseVoice(request.voices)) {
    parentPort.postMessage({ type: 'error', id: request.id, message: 'no usable eSpeak voice among ' + request.voices.join(', '), fatal: false });
    return;
  }
  synth.set_rate(request.rate);
  synth.set_pitch(request.pitch);
  let aborted = false;
  const escaped = escapeMarkup(request.text);
  // Position in the escaped text -> position in the request's text.
  const origin = request.words ? toOrigin(request.text) : undefined;
  synth.synthesize(escaped, (samples, events) => {
    if (Atomics.load(cancel, 0) === request.id) { aborted = true; return 1; }
    let words;
    if (origin && events) {
      words = [];
      for (const event of events) {
        if (event.type !== 'word') continue;
        const at = origin[Math.max(0, event.text_position - 1)];
        words.push({ at: at === undefined ? request.text.length : at, length: event.word_length, ms: event.audio_position });
      }
    }
    if (samples && samples.length > 0) {
      if (request.gain !== 1) applyGain(samples, request.gain);
      parentPort.postMessage({ type: 'chunk', id: request.id, pcm: samples.buffer, words }, [samples.buffer]);
    } else if (words && words.length > 0) {
      parentPort.postMessage({ type: 'chunk', id: request.id, pcm: new ArrayBuffer(0), words });
    }
    return 0;
  });
  parentPort.postMessage({ type: 'done', id: request.id, aborted });
}

parentPort.on('message', (request) => {
  if (!request || request.type !== 'synth') return;
  try {
    run(request);
  } catch (error) {
    // A throw from inside the WebAssembly module may leave it corrupt: report and exit,
    // the owner starts a fresh worker for the next request.
    parentPort.postMessage({ type: 'error', id: request.id, message: String(error && error.message || error), fatal: true });
    process.exit(1);
  }
});

(async () => {
  const module = await import(workerData.moduleUrl);
  const instance = await module.default();
  synth = new instance.eSpeakNGWorker();
  // V8 compiles WebAssembly lazily and optimizes hot code later: the first
  // syntheses run up to 50x slower. Pay that here, before taking requests.
  if (setVoice('en-us')) {
    for (let i = 0; i < workerData.warmUpRounds; i++) synth.synthesize(WARM_UP_TEXT, () => 0);
  }
  parentPort.postMessage({ type: 'ready', sampleRate: synth.get_samplerate() });
})().catch((error) => {
  parentPort.postMessage({ type: 'load-failed', message: String(error && error.message || error) });
});
`;
