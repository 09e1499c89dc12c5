/**
 * Speech engines of the reference server: `espeak` (real speech, optional
 * package) and `tone` (built in, deterministic).
 */
import { UnavailableError } from '../../errors.js';
import { EspeakEngine, espeakAvailable } from './espeak.js';
import { ToneEngine } from './tone.js';
import type { SpeechEngine } from './types.js';
import type { EngineChoice } from './choices.js';

export { espeakAvailable, EspeakEngine, ESPEAK_SAMPLE_RATE, type EspeakEngineOptions } from './espeak.js';
export { ToneEngine, TONE_SAMPLE_RATE, type ToneEngineOptions } from './tone.js';
export { EngineError, EngineErrorCode } from './errors.js';
export { EngineName, type SpeechEngine, type SynthesisOptions, type VoiceParams } from './types.js';
export { ENGINE_CHOICES, type EngineChoice } from './choices.js';

/**
 * Creates and warms up an engine. `auto` picks `espeak` when its package is
 * installed and loads, else `tone`; `espeak` throws `UnavailableError` when the
 * package is missing and `EngineError` when it cannot load.
 */
export async function createEngine(name: EngineChoice, options: { warmUpRounds?: number } = {}): Promise<SpeechEngine> {
  if (name === 'tone') return new ToneEngine();
  if (!(await espeakAvailable())) {
    if (name === 'espeak') throw new UnavailableError('the espeak engine needs the optional package @echogarden/espeak-ng-emscripten');
    return new ToneEngine();
  }
  const engine = new EspeakEngine(options.warmUpRounds !== undefined ? { warmUpRounds: options.warmUpRounds } : {});
  try {
    await engine.warmUp();
    return engine;
  } catch (error) {
    await engine.close();
    if (name === 'espeak') throw error;
    return new ToneEngine();
  }
}
