import type { Infra } from '../../platform/infra.ts';
import { LocalAnalysisEngine } from '../../engines/analysis/local.ts';
import { ModelServerAnalysisEngine } from '../../engines/analysis/model-server.ts';
import { TwelveLabsAnalysisEngine } from '../../engines/analysis/twelvelabs.ts';
import type { AnalysisEngine } from '../../engines/analysis/types.ts';
import { ClassicalAvatarEngine } from '../../engines/avatar/classical.ts';
import { HeyGenAvatarEngine } from '../../engines/avatar/heygen.ts';
import { ModelServerAvatarEngine } from '../../engines/avatar/model-server.ts';
import type { AvatarEngine } from '../../engines/avatar/types.ts';
import { EngineRegistry } from '../../engines/core/registry.ts';
import { ClassicalLipsyncEngine } from '../../engines/lipsync/classical.ts';
import { ModelServerLipsyncEngine } from '../../engines/lipsync/model-server.ts';
import { ReplicateLipsyncEngine } from '../../engines/lipsync/replicate.ts';
import { SyncLabsLipsyncEngine } from '../../engines/lipsync/synclabs.ts';
import type { LipsyncEngine } from '../../engines/lipsync/types.ts';
import { LumaVideoGenEngine } from '../../engines/videogen/luma.ts';
import { ModelServerVideoGenEngine } from '../../engines/videogen/model-server.ts';
import { RunwayVideoGenEngine } from '../../engines/videogen/runway.ts';
import { TitleCardEngine } from '../../engines/videogen/title-card.ts';
import type { VideoGenEngine } from '../../engines/videogen/types.ts';
import { parseModelServers, type ModelServer } from '../../engines/core/model-server.ts';
import { transcribeMedia } from './speech.ts';

export interface VideoEngines {
  avatar: EngineRegistry<AvatarEngine>;
  lipsync: EngineRegistry<LipsyncEngine>;
  generate: EngineRegistry<VideoGenEngine>;
  analysis: EngineRegistry<AnalysisEngine>;
  /** Self-hosted model servers by "<kind>:<provider>" (health-checked at submission). */
  servers: Map<string, ModelServer>;
}

const memo = new WeakMap<Infra, VideoEngines>();

/**
 * The video engines of a process, built once per Infra from config and kept warm (the landmark models load on
 * first use and stay loaded). `default` engines are local; self-hosted neural engines come from
 * VIDEO_MODEL_SERVERS; commercial vendors need a key (./vendor-keys.ts).
 */
export function videoEngines(infra: Infra): VideoEngines {
  let e = memo.get(infra);
  if (e) return e;
  const servers = new Map<string, ModelServer>();
  for (const s of parseModelServers(infra.config.VIDEO_MODEL_SERVERS)) servers.set(`${s.kind}:${s.provider}`, s);
  e = {
    avatar: new EngineRegistry<AvatarEngine>('avatar').register('default', new ClassicalAvatarEngine()),
    lipsync: new EngineRegistry<LipsyncEngine>('lipsync').register(
      'default',
      new ClassicalLipsyncEngine(infra.config.VIDEO_LIPSYNC_KEYFRAME_EVERY),
    ),
    generate: new EngineRegistry<VideoGenEngine>('text-to-video').register('default', new TitleCardEngine()),
    analysis: new EngineRegistry<AnalysisEngine>('analysis').register(
      'default',
      new LocalAnalysisEngine((path, signal) =>
        transcribeMedia(infra, { job: null, provider: 'default', language: 'en', path }, signal),
      ),
    ),
    servers,
  };
  // Commercial vendors: always registered; a job needs a key for them (checked at submission).
  const base = infra.config.vendors.baseUrls;
  const pollMs = infra.config.VIDEO_VENDOR_POLL_MS;
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
  memo.set(infra, e);
  return e;
}
