import { engineLatency } from '../core/metrics.ts';

export interface TranslateRequest {
  texts: string[];
  /** Language tags; `source` '' = the engine decides (Apertium needs it: callers pass the detected one). */
  source: string;
  target: string;
  apiKey?: string;
  signal?: AbortSignal;
}

/** Machine translation; one output per input text, in order. Adapters implement `_translate`. */
export abstract class TranslateEngine {
  abstract readonly provider: string;
  abstract readonly label: string;
  abstract supports(source: string, target: string): boolean;
  protected abstract _translate(req: TranslateRequest): Promise<string[]>;

  async translate(req: TranslateRequest): Promise<string[]> {
    if (req.texts.length === 0) return [];
    const end = engineLatency.startTimer({ capability: 'translate', provider: this.provider });
    try {
      const out = await this._translate(req);
      end({ outcome: 'ok' });
      return out;
    } catch (e) {
      end({ outcome: 'error' });
      throw e;
    }
  }
}
