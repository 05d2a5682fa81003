import type { VendorWith } from '../../../kernel/vendors.ts';
import { adapterOptions } from '../../core/vendor-options.ts';
import { SttEngine, type SttCapabilities } from '../types.ts';

/**
 * The template of a hosted STT vendor's adapter: named `<vendor>.stt` after its entry in the vendor table, batch
 * and live, speakers and word times in any language, a key needed; its options are its defaults overridden by the
 * caller's (adapterOptions: the base URL checked). The adapter writes only its wire format.
 */
export abstract class HostedSttEngine<O extends { baseUrl: string }> extends SttEngine {
  readonly provider: VendorWith<'stt'>;
  readonly label: string;
  readonly capabilities: SttCapabilities;
  protected readonly opts: O;

  constructor(provider: VendorWith<'stt'>, defaults: O, opts: Partial<O>, sampleRates: number[]) {
    super();
    this.provider = provider;
    this.label = `${provider}.stt`;
    this.capabilities = {
      streaming: true,
      diarization: true,
      wordTimestamps: true,
      sampleRates,
      languages: ['*'],
      requiresKey: true,
    };
    this.opts = adapterOptions<O>(this.label, defaults, opts);
  }
}
