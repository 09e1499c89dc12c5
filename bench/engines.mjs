// Speech engines and audio encoders of the reference server: time to first
// chunk (cold and warm), real-time factor per engine and text, event-loop
// delay during synthesis, and encoder cost per second of audio.
// Run `npm run build` first; this imports the compiled code from dist/.
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createStreamEncoder, supportedFormats } from '../dist/server/audio/encoder.js';
import { EspeakEngine, espeakAvailable, ToneEngine } from '../dist/server/engines/index.js';
import { writeResults } from './_common.mjs';

const VOICE = { basePitchHz: 110, rate: 1, espeakVoice: 'en-us' };
const TEXTS = {
  short: 'Hello from voxpipe.',
  sentence: 'The quick brown fox jumps over the lazy dog, then it runs back into the forest to find its friends.',
  paragraph:
    'Realtime speech synthesis streams audio while the text is still arriving. The server splits the text into segments, ' +
    'synthesizes each one as soon as it is complete, and sends the audio in small frames so that playback can start ' +
    'within a fraction of a second. Every frame carries a sequence number, and the client reassembles them in order. ' +
    'When the connection drops, a reliable client resumes from the last acknowledged segment without paying twice.',
};
const WARM_RUNS = 15;
const ENCODE_RUNS = 5;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const p95 = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
};
const round = (value, digits = 3) => Number(value.toFixed(digits));

/** One synthesis: ms to first chunk, ms in total, seconds of audio. */
async function timeSynthesis(engine, text) {
  const start = performance.now();
  let firstMs;
  let bytes = 0;
  for await (const chunk of engine.synthesize(text, { voice: VOICE })) {
    firstMs ??= performance.now() - start;
    bytes += chunk.length;
  }
  const totalMs = performance.now() - start;
  return { firstMs: firstMs ?? totalMs, totalMs, audioSeconds: bytes / 2 / engine.sampleRate };
}

async function benchEngine(name, create) {
  const coldEngine = create();
  const cold = await timeSynthesis(coldEngine, TEXTS.short);
  await coldEngine.close();

  const engine = create();
  const warmUpStart = performance.now();
  await engine.warmUp();
  const warmUpMs = performance.now() - warmUpStart;
  const firstAfterWarmUp = await timeSynthesis(engine, TEXTS.short);
  await timeSynthesis(engine, TEXTS.sentence); // JIT warm-up of the main thread's side
  const texts = {};
  for (const [label, text] of Object.entries(TEXTS)) {
    const runs = [];
    for (let i = 0; i < WARM_RUNS; i++) runs.push(await timeSynthesis(engine, text));
    const audioSeconds = runs[0].audioSeconds;
    const totalMs = median(runs.map((r) => r.totalMs));
    texts[label] = {
      chars: text.length,
      audioSeconds: round(audioSeconds),
      firstChunkMsMedian: round(median(runs.map((r) => r.firstMs))),
      firstChunkMsP95: round(p95(runs.map((r) => r.firstMs))),
      totalMsMedian: round(totalMs),
      realTimeFactor: round(totalMs / 1000 / audioSeconds, 5),
      timesRealTime: round(audioSeconds / (totalMs / 1000), 1),
    };
  }
  // How long the event loop stalls while a long text is synthesized and consumed.
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const long = await timeSynthesis(engine, TEXTS.paragraph.repeat(4));
  histogram.disable();
  await engine.close();
  return {
    engine: name,
    sampleRate: engine.sampleRate,
    cold: { firstChunkMs: round(cold.firstMs), totalMs: round(cold.totalMs), note: 'new engine, first request (includes loading)' },
    warmUpMs: round(warmUpMs),
    firstRequestAfterWarmUp: { firstChunkMs: round(firstAfterWarmUp.firstMs), totalMs: round(firstAfterWarmUp.totalMs) },
    texts,
    eventLoopDuringLongText: { audioSeconds: round(long.audioSeconds), maxDelayMs: round(histogram.max / 1e6), p99DelayMs: round(histogram.percentile(99) / 1e6) },
  };
}

async function speechPcm(engine, seconds) {
  const parts = [];
  let bytes = 0;
  while (bytes / 2 / engine.sampleRate < seconds) {
    for await (const chunk of engine.synthesize(TEXTS.paragraph, { voice: VOICE })) {
      parts.push(chunk);
      bytes += chunk.length;
    }
  }
  return Buffer.concat(parts).subarray(0, Math.round(seconds * engine.sampleRate) * 2);
}

function benchEncoder(format, pcm, sampleRate) {
  const info = { sampleRate, channels: 1, bitDepth: 16 };
  const chunkBytes = Math.round(sampleRate * 0.02) * 2; // 20 ms chunks, as engines stream
  const audioSeconds = pcm.length / 2 / sampleRate;
  const runs = [];
  let outBytes = 0;
  for (let run = 0; run < ENCODE_RUNS + 1; run++) {
    const start = performance.now();
    const encoder = createStreamEncoder(format, info);
    outBytes = 0;
    for (let i = 0; i < pcm.length; i += chunkBytes) {
      outBytes += encoder.write(pcm.subarray(i, i + chunkBytes)).length;
      // A segment boundary every 2 s, as a realtime request would have.
      if ((i / chunkBytes) % 100 === 99) outBytes += encoder.endSegment().length;
    }
    outBytes += encoder.end().length;
    if (run > 0) runs.push(performance.now() - start); // run 0 warms the JIT
  }
  const ms = median(runs);
  return { format, sampleRate, audioSeconds: round(audioSeconds), msPerAudioSecond: round(ms / audioSeconds), timesRealTime: round((audioSeconds * 1000) / ms, 0), kbps: round((outBytes * 8) / audioSeconds / 1000, 1) };
}

const results = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, platform: `${os.platform()} ${os.arch()}`, loadAverageAtStart: os.loadavg().map((l) => round(l, 2)) },
  engines: [],
  encoders: [],
};

results.engines.push(await benchEngine('tone', () => new ToneEngine()));
const haveEspeak = await espeakAvailable();
if (haveEspeak) results.engines.push(await benchEngine('espeak', () => new EspeakEngine()));
else results.engines.push({ engine: 'espeak', skipped: '@echogarden/espeak-ng-emscripten is not installed' });

const formats = supportedFormats();
const sources = [new ToneEngine()];
if (haveEspeak) sources.push(new EspeakEngine());
for (const source of sources) {
  const pcm = await speechPcm(source, 20);
  for (const format of ['wav', 'mp3', 'opus']) {
    if (formats.includes(format)) results.encoders.push({ source: source.name, ...benchEncoder(format, pcm, source.sampleRate) });
  }
  await source.close();
}

for (const engine of results.engines) {
  if (engine.skipped) {
    console.log(`${engine.engine}: skipped (${engine.skipped})`);
    continue;
  }
  console.log(`${engine.engine} @ ${engine.sampleRate} Hz: cold first chunk ${engine.cold.firstChunkMs} ms, warmUp() ${engine.warmUpMs} ms then first chunk ${engine.firstRequestAfterWarmUp.firstChunkMs} ms, event loop max delay ${engine.eventLoopDuringLongText.maxDelayMs} ms during ${engine.eventLoopDuringLongText.audioSeconds} s of audio`);
  for (const [label, t] of Object.entries(engine.texts)) {
    console.log(`  ${label.padEnd(9)} ${String(t.audioSeconds).padStart(6)} s audio: first chunk ${t.firstChunkMsMedian} ms (p95 ${t.firstChunkMsP95}), total ${t.totalMsMedian} ms, RTF ${t.realTimeFactor} (${t.timesRealTime}x real time)`);
  }
}
for (const e of results.encoders) {
  console.log(`encode ${e.format.padEnd(4)} from ${e.source} @ ${e.sampleRate} Hz: ${e.msPerAudioSecond} ms per audio second (${e.timesRealTime}x real time), ${e.kbps} kbit/s`);
}

console.log(`wrote ${writeResults('engines', results)}`);
