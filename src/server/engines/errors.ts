import { VoxpipeError, type VoxpipeErrorOptions } from '../../errors.js';

/** Codes of `EngineError`; `generation_failed` is the spec's provider code. */
export const EngineErrorCode = {
  generationFailed: 'generation_failed',
  closed: 'engine_closed',
} as const;
export type EngineErrorCode = (typeof EngineErrorCode)[keyof typeof EngineErrorCode];

/** A speech engine failed (worker crash, synthesizer error) or was closed. */
export class EngineError extends VoxpipeError {
  override name = 'EngineError';
  constructor(code: EngineErrorCode, message: string, options: VoxpipeErrorOptions = {}) {
    super(code, message, { retryable: code === EngineErrorCode.generationFailed, ...options });
  }
}
