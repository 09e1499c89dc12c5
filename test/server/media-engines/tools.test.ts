import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectMediaTools, detectRecognizer, hasFfmpeg, mediaToolsOf, RecognizerKind, setMediaTools } from '../../../src/server/media-engines/tools.js';

const root = mkdtempSync(join(tmpdir(), 'voxpipe-tools-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function fakeBin(dir: string, ...names: string[]): string {
  mkdirSync(dir, { recursive: true });
  for (const name of names) {
    writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

describe('detecting the media tools', () => {
  it('finds ffmpeg and ffprobe on PATH, and reports them missing elsewhere', () => {
    const bin = fakeBin(join(root, 'ff'), 'ffmpeg', 'ffprobe');
    const tools = detectMediaTools(bin);
    expect(tools.ffmpeg).toBe(join(bin, 'ffmpeg'));
    expect(hasFfmpeg(tools)).toBe(true);
    const none = detectMediaTools(join(root, 'empty'));
    expect(none).toEqual({ ffmpeg: undefined, ffprobe: undefined, recognizer: undefined });
    expect(hasFfmpeg({ ...tools, ffprobe: undefined })).toBe(false);
  });

  it('prefers pocketsphinx_continuous when its English model is installed, else the 5.x pocketsphinx', () => {
    const model = join(root, 'model');
    mkdirSync(model, { recursive: true });
    const both = fakeBin(join(root, 'both'), 'pocketsphinx_continuous', 'pocketsphinx');
    expect(detectRecognizer(both, [model])).toEqual({ kind: RecognizerKind.continuous, path: join(both, 'pocketsphinx_continuous') });
    expect(detectRecognizer(both, [join(root, 'no-model')])).toEqual({ kind: RecognizerKind.single, path: join(both, 'pocketsphinx') });
    const onlyOld = fakeBin(join(root, 'old'), 'pocketsphinx_continuous');
    expect(detectRecognizer(onlyOld, [join(root, 'no-model')])).toBeUndefined();
  });

  it('lets one server see other tools without touching the others', () => {
    const a = {};
    const b = {};
    setMediaTools(a, { ffmpeg: undefined, ffprobe: undefined, recognizer: undefined });
    expect(mediaToolsOf(a).ffmpeg).toBeUndefined();
    expect(mediaToolsOf(b)).toEqual(detectMediaTools());
  });
});
