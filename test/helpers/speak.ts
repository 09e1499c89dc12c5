/**
 * The reference audio of a text: a SpeechStream on `config` speaks it whole
 * and the bytes are collected. Tests compare what another path produced
 * (an adapter, the browser, a resumed request) with this.
 */
import type { ServiceConfig } from '../../src/config.js';
import { createSpeechStream, type SpeechOptions } from '../../src/speech.js';
import type { SpeechStream, SpeechStreamSummary } from '../../src/stream/speech-stream.js';

export async function speakText(config: ServiceConfig, text: string, options: SpeechOptions = {}): Promise<{ audio: Buffer; summary: SpeechStreamSummary }> {
  const speech = await createSpeechStream(config, options);
  speech.end(text);
  const parts: Buffer[] = [];
  for await (const c of speech) parts.push(c as Buffer);
  return { audio: Buffer.concat(parts), summary: speech.summary() };
}

/** Read a stream to its end: the audio, and the error it ended with (undefined when it ended well). */
export async function drain(speech: SpeechStream): Promise<{ audio: Buffer; error: unknown }> {
  const parts: Buffer[] = [];
  try {
    for await (const c of speech) parts.push(c as Buffer);
  } catch (error) {
    return { audio: Buffer.concat(parts), error };
  }
  return { audio: Buffer.concat(parts), error: undefined };
}
