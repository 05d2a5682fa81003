import type { z } from 'zod';

/**
 * A seam's registry (issue 30): for every name in the contract's catalogue (shared/contracts/turn-seams.ts)
 * the factory of its implementation, given the call's context and the agent's settings for it. Typed against the
 * catalogue, so a name without a factory, or a factory without a name, does not compile.
 */
export type SeamRegistry<C extends Record<string, z.ZodType>, Ctx, T> = {
  [K in keyof C]: (ctx: Ctx, opts: z.infer<C[K]>) => T;
};

/** The implementation an agent chose: its factory, with the settings the contract already validated. */
export function fromRegistry<C extends Record<string, z.ZodType>, Ctx, T>(
  registry: SeamRegistry<C, Ctx, T>,
  ctx: Ctx,
  choice: z.infer<C[keyof C]> & { name: keyof C },
): T {
  const make = registry[choice.name] as (ctx: Ctx, opts: unknown) => T;
  return make(ctx, choice);
}
