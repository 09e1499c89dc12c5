/**
 * A one-line progress bar on standard error, redrawn in place with `\r`.
 * Only where someone watches (a TTY, or `--progress`): in a log file a
 * redrawn line is noise.
 */

export interface ProgressBarOptions {
  /** Draw at all; default false (the caller decides: TTY or --progress). */
  enabled?: boolean;
  /** Characters of the bar itself; default 24. */
  width?: number;
  /** Longest time between two redraws of the same figures, ms; default 100 (redraws are throttled). */
  minIntervalMs?: number;
  /** Clock, for tests; default `performance.now`. */
  now?: () => number;
}

/** The bar for `done` of `total`, e.g. `[#####-----] 50%  10/20  label`. */
export function renderBar(done: number, total: number, width: number, label: string): string {
  const share = total > 0 ? Math.min(1, Math.max(0, done / total)) : 1;
  const filled = Math.round(share * width);
  const percent = String(Math.floor(share * 100)).padStart(3);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent}%  ${done}/${total}  ${label}`;
}

export class ProgressBar {
  readonly #out: NodeJS.WritableStream;
  readonly #enabled: boolean;
  readonly #width: number;
  readonly #minIntervalMs: number;
  readonly #now: () => number;
  #lastDrawMs = Number.NEGATIVE_INFINITY;
  #lastLength = 0;

  constructor(out: NodeJS.WritableStream, options: ProgressBarOptions = {}) {
    this.#out = out;
    this.#enabled = options.enabled ?? false;
    this.#width = options.width ?? 24;
    this.#minIntervalMs = options.minIntervalMs ?? 100; // ms
    this.#now = options.now ?? (() => performance.now());
  }

  /** Redraw (throttled, except for the last step). */
  update(done: number, total: number, label: string): void {
    if (!this.#enabled) return;
    const now = this.#now();
    if (done < total && now - this.#lastDrawMs < this.#minIntervalMs) return;
    this.#lastDrawMs = now;
    const line = renderBar(done, total, this.#width, label);
    // Pad over the tail of a longer previous line.
    this.#out.write(`\r${line.padEnd(this.#lastLength)}`);
    this.#lastLength = line.length;
  }

  /** Erase the bar, so the table starts on a clean line. */
  clear(): void {
    if (!this.#enabled || this.#lastLength === 0) return;
    this.#out.write(`\r${' '.repeat(this.#lastLength)}\r`);
    this.#lastLength = 0;
  }
}
