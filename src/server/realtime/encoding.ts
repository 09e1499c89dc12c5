/**
 * The bridge from a resolved request to the engine and the encoders: the
 * synthesis options of its voice and model, and its stream encoder.
 */
import type { AudioFormat } from '../../protocol/audio.js';
import { createStreamEncoder } from '../audio/encoder.js';
import type { ServerContext } from '../context.js';
import type { SynthesisOptions } from '../engines/types.js';
import type { SegmentEncoder } from './audio-pump.js';
import type { ResolvedRequest } from './resolve-request.js';

export interface RequestEncoderOptions {
  /**
   * True when the first segment this encoder encodes is the request's first:
   * only then does a wav stream begin with its header.
   */
  streamStart: boolean;
}

/** Synthesis options of a request (the pump adds the abort signal). */
export function synthesisOptions(resolved: ResolvedRequest): Omit<SynthesisOptions, 'signal'> {
  const { request, voice, model } = resolved;
  const options: Omit<SynthesisOptions, 'signal'> = { voice: { basePitchHz: voice.basePitchHz, rate: model.rate, espeakVoice: voice.espeakVoice } };
  if (request.speed !== undefined) options.speed = request.speed;
  if (request.volume !== undefined) options.volume = request.volume;
  if (request.language !== undefined) options.language = request.language;
  return options;
}

/** The stream encoder of a request on one connection. */
export function createRequestEncoder(format: AudioFormat, ctx: ServerContext, options: RequestEncoderOptions): SegmentEncoder {
  return createStreamEncoder(format, { sampleRate: ctx.engine.sampleRate, channels: 1, bitDepth: 16 }, { streamStart: options.streamStart });
}
