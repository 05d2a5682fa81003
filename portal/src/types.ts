/** Response shapes of the /v1 routes and portal reads the pages use (see /openapi.json for the full schemas). */

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
  hasMore: boolean;
}

export interface Developer {
  id: string;
  name: string;
  tier: string;
  phone: string | null;
}

export interface SessionInfo {
  status?: 'signed_in' | 'needs_name';
  phone?: string;
  developer: Developer | null;
  csrfToken: string;
  idleExpiresAt: string;
  absoluteExpiresAt: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  expiresAt?: string | null;
  lastUsedAt?: string | null;
}

export interface CreatedKey {
  id: string;
  key: string;
  name: string;
  expiresAt?: string | null;
  message: string;
}

export interface Credits {
  used: number;
  limit: number;
  remaining: number;
}

export interface Usage {
  credits: Credits;
  breakdown: Record<string, number>;
  requestCount: number;
}

export type DailyUsage = z.infer<typeof DailyUsageSchema>;

export interface Subscription {
  tier: string;
  tierDisplay: string;
  credits: Credits;
  plan: { monthlyCredits: number; overageRate: number; carryoverMonths: number };
  paymentCustomerId?: string | null;
  tierExpiresAt?: string | null;
  periodStart?: string | null;
  periodEnd?: string | null;
}

export interface ProviderKey {
  provider: string;
  lastFour: string;
  createdAt: string;
  verifiedAt: string | null;
}

export interface Agent {
  id: string;
  name: string;
  description?: string;
  systemPrompt?: string;
  firstMessage?: string;
  voiceId?: string;
  ttsProvider?: string;
  llmProvider?: string;
  llmModel?: string;
  collectionId?: string | null;
  language?: string;
  temperature?: number;
  maxTokens?: number;
  status: string;
  createdAt: string;
  updatedAt: string;
}

export interface Collection {
  id: string;
  name: string;
  description?: string;
  createdAt: string;
}

export interface SearchHit {
  content: string;
  score: number;
  documentId: string;
  chunkIndex: number;
}

/** Call traces: the platform's own zod contracts, imported as types only (nothing of zod reaches the bundle). */
export type { CutInRates, SessionDetail, SessionSummary } from '../../shared/contracts/sessions.ts';
export type { RootCauseReport as RootCause } from '../../shared/contracts/sessions.ts';
import type { SessionDetail } from '../../shared/contracts/sessions.ts';
export type Turn = SessionDetail['turns'][number];

export interface VideoJob {
  id: string;
  type: string;
  status: 'pending' | 'processing' | 'completed' | 'failed';
  provider: string;
  progress: number;
  result?: { video_url?: string; duration_seconds?: number; width?: number; height?: number };
  error?: { code: string; message: string };
  created_at: string;
  completed_at?: string | null;
}

/** Portal-only reads: the backend's zod contracts, as types only. */
import type { z } from 'zod';
import type { DailyUsage as DailyUsageSchema, WebhookOverview } from '../../shared/contracts/portal.ts';
export type WebhookInfo = z.infer<typeof WebhookOverview>;
