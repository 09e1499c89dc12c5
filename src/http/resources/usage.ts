/** Usage summary (spec 4.9): balance, API usage (`apiUsage.totalCreditsCharged`) and the recent ledger. */
import type { HttpClient } from '../client.js';
import { asObject, num, type JsonObject } from '../../protocol/fields.js';
import { REST_ROUTES } from '../../protocol/rest.js';

export const USAGE_PATH = REST_ROUTES.usage;

export interface UsageSummary {
  /** `apiUsage.totalCreditsCharged`. */
  totalCreditsCharged: number | undefined;
  /** The whole summary (its other fields are not specified). */
  raw: JsonObject;
}

export class Usage {
  constructor(private readonly client: HttpClient) {}

  async get(options: { query?: Record<string, string | number | undefined>; signal?: AbortSignal | undefined } = {}): Promise<UsageSummary> {
    const res = await this.client.json({ path: USAGE_PATH, query: options.query ?? {}, signal: options.signal });
    const raw = asObject(res.data);
    return { totalCreditsCharged: num(asObject(raw['apiUsage']), 'totalCreditsCharged'), raw };
  }
}
