/** The CLI's service: the library's `openService` with notes on standard error. */
import { openService as open, type OpenServiceOptions, type Service } from '../service.js';
import { note, type Io } from './io.js';

export type { Service };

export function openService(io: Io, options: Pick<OpenServiceOptions, 'engine'> = {}): Promise<Service> {
  return open({ ...options, env: io.env, onNote: (text) => note(io, text) });
}
