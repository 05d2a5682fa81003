import { AssemblyAiStt } from '../../../shared/engines/stt/vendors/assemblyai.ts';
import { DeepgramStt } from '../../../shared/engines/stt/vendors/deepgram.ts';
import { ElevenLabsStt } from '../../../shared/engines/stt/vendors/elevenlabs.ts';
import { OpenAiStt } from '../../../shared/engines/stt/vendors/openai.ts';
import { startAssemblyAiStreamDouble } from '../../../support/doubles/assemblyai-stream.ts';
import { startDeepgramLiveDouble } from '../../../shared/domains/agent-tests/simulators/deepgram-live.ts';
import { startElevenLabsRealtimeDouble } from '../../../support/doubles/elevenlabs-realtime.ts';
import { startOpenAiRealtimeDouble } from '../../../support/doubles/openai-realtime.ts';
import { sttStreamConformance, type SttStreamCase } from './stt-stream-conformance.ts';

const cases: SttStreamCase[] = [
  {
    provider: 'deepgram',
    startDouble: (script) => startDeepgramLiveDouble({ model: 'endpointing', script }),
    make: (d) => new DeepgramStt({ baseUrl: d.url }),
  },
  {
    provider: 'assemblyai',
    startDouble: (script) => startAssemblyAiStreamDouble({ script }),
    make: (d) => new AssemblyAiStt({ baseUrl: 'http://127.0.0.1:9', streamingUrl: d.url.replace(/^http/, 'ws') }),
  },
  {
    provider: 'openai',
    startDouble: (script) => startOpenAiRealtimeDouble({ script }),
    make: (d) => new OpenAiStt({ baseUrl: `${d.url}/v1` }),
  },
  {
    provider: 'elevenlabs',
    startDouble: (script) => startElevenLabsRealtimeDouble({ script }),
    make: (d) => new ElevenLabsStt({ baseUrl: d.url }),
  },
];

for (const c of cases) sttStreamConformance(c);
