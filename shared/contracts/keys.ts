import { z } from 'zod';

export const CreateKeyBody = z
  .object({
    name: z.string().min(1).max(100).default('Default'),
    expiresInDays: z.number().int().min(1).max(365).optional(),
  })
  .strict();
export type CreateKeyBody = z.infer<typeof CreateKeyBody>;

export const CreatedKey = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  /** Absent when the key never expires (the contract: a string, absent when no expiry). */
  expiresAt: z.string().optional(),
  message: z.string(),
});
export type CreatedKey = z.infer<typeof CreatedKey>;

export const RotatedKey = z.object({ id: z.string(), key: z.string(), name: z.string(), message: z.string() });
export type RotatedKey = z.infer<typeof RotatedKey>;

export const KeyListItem = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  createdAt: z.string(),
  /** Absent when the key never expires / was never used: strings or absent, never null. */
  expiresAt: z.string().optional(),
  lastUsedAt: z.string().optional(),
});
export type KeyListItem = z.infer<typeof KeyListItem>;

export const IdParams = z.object({ id: z.string().min(1).max(100) });
