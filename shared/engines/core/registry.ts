import { EngineError } from '../../kernel/errors/engine-error.ts';

/**
 * A registry of adapters for one capability, built explicitly at start-up from config. `get` resolves the
 * `provider` field of a request (falling back to `default`) or fails with EngineError `not_configured` (400 `provider_unavailable` at the API).
 */
export class EngineRegistry<T> {
  private readonly adapters = new Map<string, T>();
  /** Engines known to the contract but not installed here, with how to enable them (said in the error). */
  private readonly absent = new Map<string, string>();

  constructor(readonly capability: string) {}

  register(provider: string, adapter: T): this {
    this.adapters.set(provider, adapter);
    return this;
  }

  /**
   * Records that `provider` is not available on this machine and why (e.g. an opt-in local engine the set-up did
   * not install): it is not listed, and a request naming it fails `not_configured` with `why` in the message.
   */
  unavailable(provider: string, why: string): this {
    this.absent.set(provider, why);
    return this;
  }

  has(provider: string): boolean {
    return this.adapters.has(provider);
  }

  providers(): string[] {
    return [...this.adapters.keys()];
  }

  get(provider: string | undefined): T {
    const id = provider ?? 'default';
    const adapter = this.adapters.get(id);
    if (!adapter) {
      const why = this.absent.get(id);
      if (why) throw EngineError.notConfigured(id, why);
      throw EngineError.notConfigured(
        id,
        `no ${this.capability} engine "${id}" is configured here; available: ${this.providers().join(', ')}`,
      );
    }
    return adapter;
  }
}
