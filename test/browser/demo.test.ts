/**
 * The browser build in a real browser: headless Chromium (Debian's
 * `chromium`, driven by `playwright-core`) loads the demo page from a
 * reference server on port 0 and speaks through `dist/browser/voxpipe.js`
 * with ticket auth, PCM into the AudioWorklet. Needs `npm run build` first
 * (`npm test` does it) and a Chromium (`.ci/run` installs it; set
 * VOXPIPE_CHROMIUM to use another).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { connect } from '../../src/realtime/connection.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { speakText } from '../helpers/speak.js';
import { CHROMIUM_PATH, has } from '../helpers/needs.js';

const CHROMIUM = has('chromium') ? CHROMIUM_PATH : undefined;
const KEY = 'sk-browser-demo-secret-4f2a';
const TEXT = 'Hello from the browser. Every byte reaches the audio thread. Nothing is lost.';

interface SpeakResult {
  bytes: number;
  ttfaMs: number;
  connections: number;
  units: number;
  underruns: number;
  error?: { code: string; message: string };
}
declare global {
  interface Window {
    voxpipeDemo: {
      speak(text: string, options?: { capture?: boolean; tokens?: boolean; noWait?: boolean }): Promise<SpeakResult>;
      bargeIn(): { spokenText: string; partialText: string; heardText: string; heardConfidence: number; unspokenText: string; playedMs: number } | undefined;
      captured(): Promise<string>;
      getTicket(): Promise<string>;
      player: { playedMs: number; position: { playedFrames: number; queuedFrames: number } } | undefined;
      ready: boolean;
    };
  }
}

let server: ReferenceServer;
let browser: Browser;
let page: Page;
const consoleLines: string[] = [];
const urls: string[] = [];

const nodePcm = async (text: string): Promise<Buffer> => (await speakText(serviceConfigOf(server, KEY), text, { format: 'pcm', transport: 'realtime' })).audio;

describe.skipIf(!CHROMIUM)('the demo page in headless Chromium', () => {
  beforeAll(async () => {
    server = await startServer({ engine: 'tone', demo: true, accounts: [{ apiKey: KEY, userId: 'browser-demo' }] });
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--autoplay-policy=no-user-gesture-required', '--no-sandbox'] });
    page = await browser.newPage();
    page.on('console', (m) => consoleLines.push(m.text()));
    page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
    page.on('request', (r) => urls.push(r.url()));
    page.on('websocket', (ws) => urls.push(ws.url()));
    await page.goto(`${server.rootUrl}/demo`);
    await page.waitForFunction(() => window.voxpipeDemo?.ready === true, null, { timeout: 15_000 });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('speaks with a ticket, and the audio thread gets exactly the Node client\'s PCM', async () => {
    const result = await page.evaluate((text) => window.voxpipeDemo.speak(text, { capture: true }), TEXT);
    expect(result.error).toBeUndefined();
    expect(result.connections).toBe(1);
    const captured = Buffer.from(await page.evaluate(() => window.voxpipeDemo.captured()), 'base64');
    const expected = await nodePcm(TEXT);
    expect(captured.length).toBe(expected.length);
    expect(captured.equals(expected)).toBe(true);
    expect(result.bytes).toBe(expected.length);
    expect(result.units).toBeGreaterThan(0);
  });

  it('streamed fake-LLM tokens give the same audio as the whole text', async () => {
    const result = await page.evaluate((text) => window.voxpipeDemo.speak(text, { capture: true, tokens: true, noWait: true }), TEXT);
    expect(result.error).toBeUndefined();
    const captured = Buffer.from(await page.evaluate(() => window.voxpipeDemo.captured()), 'base64');
    expect(captured.equals(await nodePcm(TEXT))).toBe(true);
  });

  it('a close 1012 mid-segment resumes on a new connection with a new ticket, byte-exact', async () => {
    await page.evaluate(() => fetch('/demo/drop', { method: 'POST' }));
    const result = await page.evaluate((text) => window.voxpipeDemo.speak(text, { capture: true, noWait: true }), TEXT);
    expect(result.error).toBeUndefined();
    expect(result.connections).toBe(2);
    const captured = Buffer.from(await page.evaluate(() => window.voxpipeDemo.captured()), 'base64');
    expect(captured.equals(await nodePcm(TEXT))).toBe(true);
  });

  it('the Drop button drops the live connection (not the next one): the speech resumes on a second connection, byte-exact', async () => {
    // Fake-LLM tokens keep the request open for seconds: the button comes while it streams.
    const long = `${TEXT} ${TEXT} ${TEXT} ${TEXT}`;
    const speaking = page.evaluate((text) => window.voxpipeDemo.speak(text, { capture: true, tokens: true, noWait: true }), long);
    await page.waitForFunction(() => (window.voxpipeDemo.player?.position.queuedFrames ?? 0) + (window.voxpipeDemo.player?.position.playedFrames ?? 0) > 0, null, { timeout: 15_000, polling: 10 });
    await page.evaluate(() => document.getElementById('drop')!.click());
    const result = await speaking;
    expect(await page.textContent('#log')).toContain('dropped the live connection; it resumes');
    expect(result.error).toBeUndefined();
    expect(result.connections).toBe(2);
    const captured = Buffer.from(await page.evaluate(() => window.voxpipeDemo.captured()), 'base64');
    expect(captured.equals(await nodePcm(long))).toBe(true);
  });

  it('a ticket works once, from the page\'s origin only', async () => {
    const origin = new URL(server.rootUrl).origin;
    const ticket = await page.evaluate(() => window.voxpipeDemo.getTicket());
    const handlers = { onEvent: () => undefined, onClose: () => undefined };
    const first = await connect({ wsUrl: server.wsUrl, ticket, origin, ...handlers });
    first.close();
    await expect(connect({ wsUrl: server.wsUrl, ticket, origin, ...handlers })).rejects.toMatchObject({ code: 'authentication_failed' });
    const another = await page.evaluate(() => window.voxpipeDemo.getTicket());
    await expect(connect({ wsUrl: server.wsUrl, ticket: another, origin: 'https://evil.example', ...handlers })).rejects.toMatchObject({ code: 'authentication_failed' });
  });

  it('barge-in stops playback at once', async () => {
    const long = Array.from({ length: 12 }, (_, i) => `Sentence number ${i + 1} keeps the listener busy for a while.`).join(' ');
    const speaking = page.evaluate((text) => window.voxpipeDemo.speak(text), long);
    await page.waitForFunction(() => (window.voxpipeDemo.player?.playedMs ?? 0) > 300, null, { timeout: 15_000 });
    const report = await page.evaluate(() => window.voxpipeDemo.bargeIn());
    // The tone engine delivered the whole text long ago; the listener heard a few hundred ms of it.
    expect(report!.playedMs).toBeGreaterThan(300);
    expect(report!.unspokenText.length).toBeGreaterThan(long.length / 2);
    expect(report!.spokenText + report!.partialText + report!.unspokenText).toBe(long);
    await speaking;
    const before = await page.evaluate(() => window.voxpipeDemo.player!.position);
    await page.waitForTimeout(400);
    const after = await page.evaluate(() => window.voxpipeDemo.player!.position);
    expect(after.queuedFrames).toBe(0);
    expect(after.playedFrames).toBe(before.playedFrames);
  });

  it('barge-in: the heard text ends at the last word the listener heard to its end (word timings from the audio)', async () => {
    const long = Array.from({ length: 6 }, (_, i) => `Sentence number ${i + 1} keeps the listener busy for a while.`).join(' ');
    const speaking = page.evaluate((text) => window.voxpipeDemo.speak(text), long);
    await page.waitForFunction(() => (window.voxpipeDemo.player?.playedMs ?? 0) > 1200, null, { timeout: 15_000 });
    const report = (await page.evaluate(() => window.voxpipeDemo.bargeIn()))!;
    await speaking;
    // The tone engine's truth: 70 ms a letter or digit, 40 ms a space; the
    // first segment is the first sentence. Heard: the words ended by then.
    const first = long.slice(0, long.indexOf('.') + 1);
    const heardBy = (ms: number): string => {
      let t = 0;
      let heard = '';
      for (const word of first.split(' ')) {
        const end = t + word.replace(/\W/g, '').length * 70;
        if (end > ms) break;
        heard = first.slice(0, first.indexOf(word, heard.length) + word.length);
        t = end + 40;
      }
      return heard;
    };
    expect(report.spokenText).toBe('');
    expect(report.partialText.startsWith(first)).toBe(true);
    // One 10 ms analysis frame either side of the play head.
    expect([heardBy(report.playedMs - 10), heardBy(report.playedMs + 10)]).toContain(report.heardText);
    expect(report.heardText.length).toBeGreaterThan(0);
    expect(report.heardConfidence).toBeGreaterThanOrEqual(0.8);
  });

  it('pressing Speak plays the text in the box: the worklet plays it to the end', async () => {
    await page.fill('#text', 'Pressing the button speaks this.');
    await page.evaluate(() => (document.getElementById('log')!.textContent = ''));
    await page.click('#speak');
    await page.waitForFunction(() => /done: \{"bytes":[1-9]/.test(document.getElementById('log')?.textContent ?? ''), null, { timeout: 20_000 });
    const position = await page.evaluate(() => window.voxpipeDemo.player!.position);
    const expected = await nodePcm('Pressing the button speaks this.');
    expect(position.playedFrames * 2).toBeGreaterThanOrEqual(expected.length);
    expect(position.queuedFrames).toBe(0);
  });

  it('no API key in the page, its scripts, any URL or any console line', async () => {
    const html = await page.content();
    const bundle = await (await fetch(`${server.rootUrl}/demo/voxpipe.js`)).text();
    expect(html).not.toContain(KEY);
    expect(bundle).not.toContain(KEY);
    expect(urls.length).toBeGreaterThan(3);
    expect(urls.filter((u) => u.includes(KEY))).toEqual([]);
    expect(consoleLines.filter((l) => l.includes(KEY))).toEqual([]);
    expect(consoleLines.filter((l) => l.startsWith('pageerror'))).toEqual([]);
  });
});
