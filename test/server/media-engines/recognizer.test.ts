import { describe, expect, it } from 'vitest';
import { UnprocessableMediaError } from '../../../src/server/audio/decode.js';
import { cleanTranscript, decodeForRecognizer, parseRecognizerOutput, recognize } from '../../../src/server/media-engines/recognizer.js';
import { RecognizerKind } from '../../../src/server/media-engines/tools.js';
import { encodeWhole } from '../../../src/server/audio/encoder.js';
import { buildWavHeader } from '../../../src/protocol/wav.js';
import { HAS_FFMPEG, HAS_RECOGNIZER, silenceWav, toneWav, TOOLS } from './helpers.js';
import { execFileSync } from 'node:child_process';

describe('recognizer output', () => {
  it('joins the utterances of both CLI flavours and drops fillers', () => {
    expect(parseRecognizerOutput(RecognizerKind.continuous, 'hello world\n\nthis is a test\n')).toBe('hello world this is a test');
    expect(parseRecognizerOutput(RecognizerKind.continuous, '000000000: hello\n000000001: again\n')).toBe('hello again');
    expect(parseRecognizerOutput(RecognizerKind.single, '{"b":0,"d":1.2,"p":1,"t":"hello world","w":[]}\n{"b":1.5,"t":"again"}\nnot json\n')).toBe('hello world again');
    expect(parseRecognizerOutput(RecognizerKind.continuous, '')).toBe('');
    expect(cleanTranscript(' <s> hello [noise] (2) world </s> ')).toBe('hello world');
  });
});

describe('decoding audio to 16 kHz mono', () => {
  it('decodes 16-bit WAV at any rate and channel count', async () => {
    const mono = await decodeForRecognizer(toneWav(2, 440, 22_050));
    expect(mono.durationSeconds).toBeCloseTo(2, 3);
    expect(mono.pcm.length / 2).toBe(32_000);
    const frames = 8_000;
    const stereo = Buffer.alloc(frames * 4);
    for (let i = 0; i < frames; i++) {
      stereo.writeInt16LE(1000, i * 4);
      stereo.writeInt16LE(3000, i * 4 + 2);
    }
    const decoded = await decodeForRecognizer(Buffer.concat([buildWavHeader({ sampleRate: 8_000, channels: 2, bitDepth: 16 }, stereo.length), stereo]));
    expect(decoded.durationSeconds).toBe(1);
    expect(decoded.pcm.length / 2).toBe(16_000);
    expect(decoded.pcm.readInt16LE(8_000)).toBe(2000);
    await expect(decodeForRecognizer(Buffer.from('RIFF....WAVEnope'))).rejects.toBeInstanceOf(UnprocessableMediaError);
  });

  it('decodes mp3 without ffmpeg, and refuses what no built-in decoder reads when ffmpeg is not there', async () => {
    const pcm = Buffer.alloc(24_000 * 2);
    for (let i = 0; i < 24_000; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / 24_000)), i * 2);
    const mp3 = encodeWhole('mp3', pcm, { sampleRate: 24_000, channels: 1, bitDepth: 16 });
    const decoded = await decodeForRecognizer(mp3, { ffmpeg: undefined });
    expect(decoded.durationSeconds).toBeGreaterThan(0.9);
    expect(decoded.pcm.length / 2 / 16_000).toBeCloseTo(decoded.durationSeconds, 3);
    await expect(decodeForRecognizer(Buffer.from('ID3 not really'), { ffmpeg: undefined })).rejects.toBeInstanceOf(UnprocessableMediaError);
    await expect(decodeForRecognizer(Buffer.from('fLaC and then nothing'), { ffmpeg: undefined })).rejects.toThrow(/ffmpeg .* is not installed/);
  });

  it.skipIf(!HAS_FFMPEG)('decodes other formats through ffmpeg and refuses non-audio (needs ffmpeg)', async () => {
    const flac = execFileSync(TOOLS.ffmpeg!, ['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=1.5', '-f', 'flac', 'pipe:1']);
    const decoded = await decodeForRecognizer(flac, { ffmpeg: TOOLS.ffmpeg });
    expect(decoded.durationSeconds).toBeCloseTo(1.5, 1);
    await expect(decodeForRecognizer(Buffer.from('just some text, no audio'), { ffmpeg: TOOLS.ffmpeg })).rejects.toBeInstanceOf(UnprocessableMediaError);
  });
});

describe.skipIf(!HAS_RECOGNIZER)('recognize (needs pocketsphinx)', () => {
  it('gives an empty transcript for silence and for no audio', async () => {
    expect(await recognize(TOOLS.recognizer!, (await decodeForRecognizer(silenceWav(1))).pcm)).toBe('');
    expect(await recognize(TOOLS.recognizer!, Buffer.alloc(0))).toBe('');
  });
});
