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
 * - out: `{ type: 'ready', sampleRate }`, `{ type: 'chunk', id, pcm }` (a
 *   transferred ArrayBuffer of s16 samples), `{ type: 'done', id, aborted }`,
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
  synth.synthesize(escapeMarkup(request.text), (samples) => {
    if (Atomics.load(cancel, 0) === request.id) { aborted = true; return 1; }
    if (samples && samples.length > 0) {
      if (request.gain !== 1) applyGain(samples, request.gain);
      parentPort.postMessage({ type: 'chunk', id: request.id, pcm: samples.buffer }, [samples.buffer]);
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
