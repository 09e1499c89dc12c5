import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ReliableSession } from '../dist/realtime/reliable/session.js';
import { SpeechStream } from '../dist/stream/speech-stream.js';
import { ROOT } from './_common.mjs';
const child = spawn(process.execPath, [join(ROOT, 'bench/_blast-server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BLAST_AUDIO_BYTES: String(8 * 1024 * 1024) } });
const port = await new Promise((res) => child.stdout.once('data', (d) => res(JSON.parse(String(d)).port)));
const wsUrl = `ws://127.0.0.1:${port}`;
for (let i = 0; i < 20; i++) {
  const speech = new SpeechStream({ transport: new ReliableSession({ wsUrl, rtHttpUrl: `http://127.0.0.1:${port}`, apiKey: 'x'.repeat(20), request: { voice_id: 'v', model: 'm', format: 'pcm' } }) });
  await speech.open();
  const sink = new Writable({ write(c, e, cb) { cb(); } });
  const done = new Promise((res, rej) => { sink.on('finish', res); speech.on('error', rej); });
  speech.pipe(sink); speech.end('Hello! Your order has shipped and arrives Tuesday.'); await done;
}
child.kill('SIGTERM'); process.exit(0);
