/** Response shapes of the /v1 routes and portal reads the pages use (see /openapi.json for the full schemas). */

/**
 * The backend's own zod contracts, imported as types only (nothing of zod reaches the bundle), so a field the API
 * adds, renames or makes nullable is a portal type error instead of a silent copy drifting from it.
 */
import type { z } from 'zod';
import type {
  Credits as CreditsSchema,
  ProviderKeyItem,
  Subscription as SubscriptionSchema,
  Usage as UsageSchema,
} from '../../shared/contracts/billing.ts';
import type { Agent as AgentSchema } from '../../shared/contracts/agents.ts';
import type { CreatedKey as CreatedKeySchema, KeyListItem } from '../../shared/contracts/keys.ts';
import type {
  BillingSetup as BillingSetupSchema,
  CollectionDocument as CollectionDocumentSchema,
  VoiceEngineInfo as VoiceEngineInfoSchema,
  DailyUsage as DailyUsageSchema,
  LoginOptions as LoginOptionsSchema,
  PortalDeveloper,
  SessionInfo as SessionInfoSchema,
  WebhookOverview,
  WebhookTestResult as WebhookTestResultSchema,
} from '../../shared/contracts/portal.ts';
import type { VideoJob as VideoJobSchema } from '../../shared/contracts/video.ts';
import type { Collection as CollectionSchema, SearchResultItem } from '../../shared/contracts/rag.ts';

export type { Page } from '../../shared/kernel/pagination.ts';
export type Developer = z.infer<typeof PortalDeveloper>;
export type SessionInfo = z.infer<typeof SessionInfoSchema>;
export type LoginOptions = z.infer<typeof LoginOptionsSchema>;
export type ApiKey = z.infer<typeof KeyListItem>;
export type CreatedKey = z.infer<typeof CreatedKeySchema>;
export type Credits = z.infer<typeof CreditsSchema>;
export type Usage = z.infer<typeof UsageSchema>;
export type DailyUsage = z.infer<typeof DailyUsageSchema>;
export type Subscription = z.infer<typeof SubscriptionSchema>;
export type ProviderKey = z.infer<typeof ProviderKeyItem>;
export type Agent = z.infer<typeof AgentSchema>;
export type Collection = z.infer<typeof CollectionSchema>;
export type SearchHit = z.infer<typeof SearchResultItem>;
export type VideoJob = z.infer<typeof VideoJobSchema>;
export type WebhookInfo = z.infer<typeof WebhookOverview>;

/** Call traces: the platform's own zod contracts, imported as types only (nothing of zod reaches the bundle). */
export type { CutInRates, SessionDetail, SessionSummary } from '../../shared/contracts/sessions.ts';
export type { RootCauseReport as RootCause } from '../../shared/contracts/sessions.ts';
import type { SessionDetail } from '../../shared/contracts/sessions.ts';
export type Turn = SessionDetail['turns'][number];

/** GET /v1/llm-providers: a provider, what it is, and whether this developer can use it now. */
export interface LlmProviderInfo {
  id: 'openai' | 'anthropic' | 'groq' | 'local';
  label: string;
  languageModel: boolean;
  defaultModel: string;
  key: 'platform' | 'stored' | 'none' | 'not-needed';
  usable: boolean;
  isDefault: boolean;
}
export type WebhookTestResult = z.infer<typeof WebhookTestResultSchema>;
export type BillingSetup = z.infer<typeof BillingSetupSchema>;
export type CollectionDocument = z.infer<typeof CollectionDocumentSchema>;
export type VoiceEngineInfo = z.infer<typeof VoiceEngineInfoSchema>;
import type { VoiceItem as VoiceItemSchema } from '../../shared/contracts/speech.ts';
import type { Estimate as EstimateSchema } from '../../shared/domains/billing/estimate-contracts.ts';
import type {
  Campaign as CampaignSchema,
  CampaignRecipient as CampaignRecipientSchema,
} from '../../shared/contracts/campaigns.ts';
import type { SpendingCaps as SpendingCapsSchema } from '../../shared/contracts/billing.ts';
export type VoiceItem = z.infer<typeof VoiceItemSchema>;
export type Estimate = z.infer<typeof EstimateSchema>;
export type Campaign = z.infer<typeof CampaignSchema>;
export type CampaignRecipient = z.infer<typeof CampaignRecipientSchema>;
export type SpendingCaps = z.infer<typeof SpendingCapsSchema>;
