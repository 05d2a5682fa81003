import type { Config } from '../kernel/config/index.ts';
import { LocalAnalysisEngine } from './analysis/local.ts';
import { ModelServerAnalysisEngine } from './analysis/model-server.ts';
import { TwelveLabsAnalysisEngine } from './analysis/twelvelabs.ts';
import type { AnalysisEngine } from './analysis/types.ts';
import { ClassicalAvatarEngine } from './avatar/classical.ts';
import { HeyGenAvatarEngine } from './avatar/heygen.ts';
import { ModelServerAvatarEngine } from './avatar/model-server.ts';
import type { AvatarEngine } from './avatar/types.ts';
import { EngineRegistry } from './core/registry.ts';
import { ClassicalLipsyncEngine } from './lipsync/classical.ts';
import { ModelServerLipsyncEngine } from './lipsync/model-server.ts';
import { ReplicateLipsyncEngine } from './lipsync/replicate.ts';
import { SyncLabsLipsyncEngine } from './lipsync/synclabs.ts';
import type { LipsyncEngine } from './lipsync/types.ts';
import { LumaVideoGenEngine } from './videogen/luma.ts';
import { ModelServerVideoGenEngine } from './videogen/model-server.ts';
import { RunwayVideoGenEngine } from './videogen/runway.ts';
import { TitleCardEngine } from './videogen/title-card.ts';
import type { VideoGenEngine } from './videogen/types.ts';
import { parseModelServers, type ModelServer } from './core/model-server.ts';

export interface VideoEngines {
  avatar: EngineRegistry<AvatarEngine>;
  lipsync: EngineRegistry<LipsyncEngine>;
  generate: EngineRegistry<VideoGenEngine>;
  analysis: EngineRegistry<AnalysisEngine>;
  /** Self-hosted model servers by "<kind>:<provider>" (health-checked at submission). */
  servers: Map<string, ModelServer>;
}

/**
 * The video engines of a process (part of engines.ts's container), built once from config and kept warm (the
 * landmark models load on first use and stay loaded). `default` engines are local; self-hosted neural engines come
 * from VIDEO_MODEL_SERVERS; commercial vendors need a key (domains/video/vendor-keys.ts).
 */
export function buildVideoEngines(config: Config): VideoEngines {
  const servers = new Map<string, ModelServer>();
  for (const s of parseModelServers(config.VIDEO_MODEL_SERVERS)) servers.set(`${s.kind}:${s.provider}`, s);
  const e: VideoEngines = {
    avatar: new EngineRegistry<AvatarEngine>('avatar').register('default', new ClassicalAvatarEngine()),
    lipsync: new EngineRegistry<LipsyncEngine>('lipsync').register(
      'default',
      new ClassicalLipsyncEngine(config.VIDEO_LIPSYNC_KEYFRAME_EVERY),
    ),
    generate: new EngineRegistry<VideoGenEngine>('text-to-video').register('default', new TitleCardEngine()),
    analysis: new EngineRegistry<AnalysisEngine>('analysis').register('default', new LocalAnalysisEngine()),
    servers,
  };
  // Commercial vendors: always registered; a job needs a key for them (checked at submission).
  const base = config.vendors.baseUrls;
  const pollMs = config.VIDEO_VENDOR_POLL_MS;
  e.avatar.register('heygen', new HeyGenAvatarEngine({ baseUrl: base.heygen, pollMs }));
  e.lipsync.register('synclabs', new SyncLabsLipsyncEngine({ baseUrl: base.synclabs, pollMs }));
  e.lipsync.register('replicate', new ReplicateLipsyncEngine({ baseUrl: base.replicate, pollMs }));
  e.generate.register('luma', new LumaVideoGenEngine({ baseUrl: base.luma, pollMs }));
  e.generate.register('runway', new RunwayVideoGenEngine({ baseUrl: base.runway, pollMs }));
  e.analysis.register('twelvelabs', new TwelveLabsAnalysisEngine({ baseUrl: base.twelvelabs, pollMs }));
  for (const s of servers.values()) {
    if (s.kind === 'avatar') e.avatar.register(s.provider, new ModelServerAvatarEngine(s));
    if (s.kind === 'lipsync') e.lipsync.register(s.provider, new ModelServerLipsyncEngine(s));
    if (s.kind === 'generate') e.generate.register(s.provider, new ModelServerVideoGenEngine(s));
    if (s.kind === 'analyze') e.analysis.register(s.provider, new ModelServerAnalysisEngine(s));
  }
  return e;
}
