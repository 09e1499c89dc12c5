/**
 * The demo page (`/demo`): type or stream text, hear it, see the time to
 * first audio and the per-segment waterfall, barge in, drop the connection
 * and watch the request resume. `window.voxpipeDemo` is the same thing as
 * an API, which the browser tests drive.
 */
export const DEMO_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>voxpipe demo</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1d1d1f; background: #f6f6f3; }
  body { max-width: 880px; margin: 2rem auto; padding: 0 1rem; }
  h1 { font-size: 1.4rem; margin-bottom: .2rem; }
  p.lead { color: #555; margin-top: 0; }
  textarea { width: 100%; height: 6rem; font: inherit; padding: .5rem; box-sizing: border-box; }
  .buttons { display: flex; gap: .5rem; flex-wrap: wrap; margin: .6rem 0 1rem; }
  button { font: inherit; padding: .45rem .9rem; border-radius: 6px; border: 1px solid #999; background: white; cursor: pointer; }
  button.primary { background: #1f6feb; color: white; border-color: #1f6feb; }
  button:disabled { opacity: .5; cursor: default; }
  .stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); gap: .5rem; margin-bottom: 1rem; }
  .stat { background: white; border-radius: 8px; padding: .5rem .7rem; box-shadow: 0 1px 2px #0001; }
  .stat b { display: block; font-size: 1.25rem; }
  .stat span { color: #666; font-size: .8rem; }
  table { width: 100%; border-collapse: collapse; background: white; border-radius: 8px; overflow: hidden; font-size: .85rem; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #eee; vertical-align: middle; }
  td.text { max-width: 280px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  .bar { position: relative; height: 12px; background: #f0f0f0; border-radius: 3px; min-width: 220px; }
  .bar i { position: absolute; top: 0; height: 12px; border-radius: 3px; }
  .bar i.wait { background: #d0d7de; }
  .bar i.gen { background: #2da44e; }
  #log { font-family: ui-monospace, monospace; font-size: .8rem; color: #444; white-space: pre-wrap; margin-top: 1rem; }
</style>
</head>
<body>
<h1>voxpipe in the browser</h1>
<p class="lead">Realtime reliable TTS over a WebSocket with a single-use ticket; PCM played by an AudioWorklet. The page never sees the API key.</p>
<textarea id="text">Hello from voxpipe in the browser. Each sentence is spoken as soon as it is ready, and a dropped connection resumes without losing or repeating a word.</textarea>
<div class="buttons">
  <button id="speak" class="primary">Speak</button>
  <button id="llm">Stream from a fake LLM</button>
  <button id="barge" disabled>Barge in</button>
  <button id="drop">Drop the connection</button>
</div>
<div class="stats">
  <div class="stat"><b id="ttfa">–</b><span>time to first audio</span></div>
  <div class="stat"><b id="played">0 ms</b><span>heard</span></div>
  <div class="stat"><b id="conns">0</b><span>connections (resumes + 1)</span></div>
  <div class="stat"><b id="underruns">0</b><span>underruns</span></div>
  <div class="stat"><b id="units">0</b><span>units charged</span></div>
</div>
<table>
  <thead><tr><th>segment</th><th>text</th><th>waterfall (sent → first audio → completed)</th><th>units</th></tr></thead>
  <tbody id="waterfall"></tbody>
</table>
<div id="log"></div>
<script type="module">
import { BrowserSpeech, PcmPlayer } from '/demo/voxpipe.js';

const $ = (id) => document.getElementById(id);
const log = (line) => { $('log').textContent += line + '\\n'; };
const config = await (await fetch('/demo/config')).json();
log('voice ' + config.voiceId + ' (' + config.engine + ' engine), realtime at ' + config.wsUrl);

async function getTicket() {
  const res = await fetch('/demo/ticket', { method: 'POST' });
  if (!res.ok) throw new Error('ticket: HTTP ' + res.status);
  return (await res.json()).ticket;
}
async function getStatus(requestId) {
  const res = await fetch('/demo/status/' + encodeURIComponent(requestId));
  if (res.status === 404) return null;
  if (!res.ok) throw new Error('status: HTTP ' + res.status);
  return res.json();
}

let current;
/** The current speech is still receiving audio (its connection is live). */
let live = false;
let player;
let timer;

function render(speech) {
  const rows = speech.waterfall;
  const end = Math.max(1, ...rows.map((r) => r.completedMs ?? r.firstAudioMs ?? r.sentMs ?? r.textMs));
  const pct = (ms) => (100 * ms / end).toFixed(2) + '%';
  $('waterfall').innerHTML = rows.map((r) => {
    const sent = r.sentMs ?? r.textMs;
    const first = r.firstAudioMs ?? sent;
    const done = r.completedMs ?? first;
    return '<tr><td>' + r.segmentId + '</td><td class="text" title="' + r.text.replace(/"/g, '&quot;') + '">' + r.text.replace(/</g, '&lt;') + '</td>' +
      '<td><div class="bar"><i class="wait" style="left:' + pct(sent) + ';width:' + pct(first - sent) + '"></i><i class="gen" style="left:' + pct(first) + ';width:' + pct(Math.max(done - first, end / 200)) + '"></i></div></td>' +
      '<td>' + (r.units ?? '') + '</td></tr>';
  }).join('');
  $('ttfa').textContent = speech.ttfaMs === undefined ? '–' : speech.ttfaMs.toFixed(0) + ' ms';
  $('conns').textContent = String(speech.connections);
  $('units').textContent = String(speech.units);
  if (player) {
    $('played').textContent = player.playedMs.toFixed(0) + ' ms';
    $('underruns').textContent = String(player.position.underruns);
  }
}

/** The first max characters of text, cut at the last word boundary, with an ellipsis when cut. */
function atWord(text, max) {
  if (text.length <= max) return text;
  // The character after the cut decides: a space there ends a whole word.
  const head = text.slice(0, max + 1);
  const end = head.search(/\\s\\S*$/);
  return (end > 0 ? head.slice(0, end).trimEnd() : text.slice(0, max)) + '\u2026';
}

/** Fake LLM: the text in 2 to 5 character tokens at about 40 tokens per second. */
async function* fakeTokens(text) {
  for (let i = 0; i < text.length;) {
    const n = 2 + Math.floor(Math.random() * 4);
    yield text.slice(i, i + n);
    i += n;
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function speak(text, options = {}) {
  if (current) current.interrupt();
  if (player) await player.close();
  player = undefined;
  const speech = new BrowserSpeech({ wsUrl: config.wsUrl, voiceId: config.voiceId, model: config.model, getTicket, getStatus });
  current = speech;
  speech.on('resumed', (r) => log('resumed (attempt ' + r.attempt + '), pending ' + r.pendingSegments.join(', ')));
  speech.on('warning', (w) => log('warning ' + w.code + ': ' + w.message));
  speech.on('error', (e) => log('error ' + e.code + ': ' + e.message));
  $('barge').disabled = false;
  const info = await speech.open();
  player = await PcmPlayer.create(info, { workletUrl: '/demo/pcm-worklet.js', capture: options.capture === true });
  clearInterval(timer);
  timer = setInterval(() => render(speech), 100);
  const feeding = (async () => {
    if (options.tokens) {
      for await (const token of fakeTokens(text)) speech.write(token);
      speech.end();
    } else speech.end(text);
  })();
  let bytes = 0;
  let error;
  live = true;
  try {
    for await (const chunk of speech.audio()) {
      bytes += chunk.data.byteLength;
      player.push(chunk.data);
    }
  } catch (err) {
    error = err;
  } finally {
    if (current === speech) live = false;
  }
  await feeding;
  player.end();
  if (!error && !options.noWait) await Promise.race([player.drained, new Promise((r) => setTimeout(r, 120000))]);
  render(speech);
  clearInterval(timer);
  $('barge').disabled = true;
  const result = { bytes, ttfaMs: speech.ttfaMs === undefined ? undefined : Math.round(speech.ttfaMs), connections: speech.connections, units: speech.units, segments: speech.waterfall.length, underruns: player.position.underruns, sampleRate: info.sampleRate, error: error ? { code: error.code, message: error.message } : undefined };
  log('done: ' + JSON.stringify(result));
  return result;
}

function bargeIn() {
  if (!current) return undefined;
  player?.clear();
  // Cut the transcript where the listener was: the player's position, not what the network delivered.
  const heard = player ? player.position.playedFrames * (current.info?.channels ?? 1) * 2 : undefined;
  const report = current.interrupt(heard);
  log('barge-in after ' + (player ? player.playedMs.toFixed(0) : 0) + ' ms heard; unspoken: ' + JSON.stringify(atWord(report.unspokenText, 60)));
  return { ...report, playedMs: player?.playedMs ?? 0 };
}

async function captured() {
  const bytes = await player.captured();
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

$('speak').onclick = () => speak($('text').value).catch((e) => log(String(e)));
$('llm').onclick = () => speak($('text').value, { tokens: true }).catch((e) => log(String(e)));
$('barge').onclick = () => bargeIn();
// While a speech streams, drop its connection now (it resumes); between speeches, arm a drop of the next one.
$('drop').onclick = async () => {
  if (live && current) {
    current.dropConnection();
    log('dropped the live connection; it resumes');
    return;
  }
  await fetch('/demo/drop', { method: 'POST' });
  log('nothing is streaming: armed a drop of the next connection (close 1012 after 3 audio frames)');
};

window.voxpipeDemo = { speak, bargeIn, captured, config, getTicket, dropConnection: () => current?.dropConnection(), get player() { return player; }, ready: true };
document.body.dataset.ready = 'true';
</script>
</body>
</html>
`;
