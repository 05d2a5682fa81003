import { EngineError } from '../../kernel/errors/engine-error.ts';

/**
 * A registry of adapters for one capability, built explicitly at start-up from config. `get` resolves the
 * `provider` field of a request (falling back to `default`) or fails with EngineError `not_configured` (400 `provider_unavailable` at the API).
 */
export class EngineRegistry<T> {
  private readonly adapters = new Map<string, T>();

  constructor(readonly capability: string) {}

  register(provider: string, adapter: T): this {
    this.adapters.set(provider, adapter);
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
      throw EngineError.notConfigured(
        id,
        `no ${this.capability} engine "${id}" is configured here; available: ${this.providers().join(', ')}`,
      );
    }
    return adapter;
  }
}
