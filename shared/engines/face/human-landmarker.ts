import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { EngineError } from '../../kernel/errors/engine-error.ts';
import type { Face, FaceLandmarker, RgbImage } from './types.ts';

const require = createRequire(import.meta.url);

interface HumanFace {
  score: number;
  box: [number, number, number, number];
  mesh: [number, number, number][];
}
interface HumanLike {
  load(): Promise<void>;
  detect(input: unknown): Promise<{ face: HumanFace[] }>;
  tf: {
    tensor3d(data: Uint8Array, shape: [number, number, number]): { dispose(): void };
    getBackend(): string;
  };
}

/** The package folder of @vladmandic/human (its exports map hides package.json, so find it from the entry). */
function humanDir(): string {
  let dir = dirname(require.resolve('@vladmandic/human'));
  while (!dir.endsWith(join('@vladmandic', 'human'))) dir = dirname(dir);
  return dir;
}

/**
 * Serves the model folder on loopback while the models load: the WASM build of Human loads models with
 * `fetch`, which cannot read file:// URLs in Node (undici). The server lives only for the load.
 */
async function serveFolder(dir: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = normalize(join(dir, decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    if (!path.startsWith(dir)) return res.writeHead(403).end();
    readFile(path).then(
      (buf) =>
        res
          .writeHead(200, { 'content-type': path.endsWith('.json') ? 'application/json' : 'application/octet-stream' })
          .end(buf),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

/**
 * Face landmarks with @vladmandic/human (MIT; BlazeFace detector + 468-point FaceMesh, models shipped inside the
 * npm package) on the TensorFlow.js WASM backend, which runs offline on CPU in Node. Loaded once per
 * process and kept warm. Detections run one at a time (the backend is single-threaded anyway).
 */
export class HumanLandmarker implements FaceLandmarker {
  readonly label = 'human.facemesh';
  private human: Promise<HumanLike> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  private load(): Promise<HumanLike> {
    this.human ??= (async () => {
      const wasm = require('@tensorflow/tfjs-backend-wasm') as { setWasmPaths(p: string): void };
      const wasmDir = `${dirname(require.resolve('@tensorflow/tfjs-backend-wasm'))}/`;
      wasm.setWasmPaths(wasmDir);
      const dir = humanDir();
      const { Human } = require(join(dir, 'dist', 'human.node-wasm.js')) as {
        Human: new (cfg: Record<string, unknown>) => HumanLike;
      };
      const { url, server } = await serveFolder(join(dir, 'models'));
      try {
        const human = new Human({
          backend: 'wasm',
          modelBasePath: url,
          wasmPath: wasmDir,
          debug: false,
          cacheSensitivity: 0,
          face: {
            enabled: true,
            detector: { rotation: false, maxDetected: 8, minConfidence: 0.3, return: false },
            mesh: { enabled: true },
            iris: { enabled: false },
            description: { enabled: false },
            emotion: { enabled: false },
            antispoof: { enabled: false },
            liveness: { enabled: false },
          },
          body: { enabled: false },
          hand: { enabled: false },
          object: { enabled: false },
          gesture: { enabled: false },
          segmentation: { enabled: false },
          filter: { enabled: false },
        });
        await human.load();
        return human;
      } finally {
        server.close();
      }
    })().catch((e: Error) => {
      this.human = null;
      throw new EngineError('default', 'unavailable', `face landmark models failed to load: ${e.message}`, true);
    });
    return this.human;
  }

  async detect(image: RgbImage, maxFaces = 8): Promise<Face[]> {
    const human = await this.load();
    const run = this.queue.then(async () => {
      const t = human.tf.tensor3d(image.data, [image.height, image.width, 3]);
      try {
        const r = await human.detect(t);
        return r.face
          .filter((f) => f.mesh?.length >= 468)
          .slice(0, maxFaces)
          .map((f) => ({ score: f.score, box: f.box, mesh: f.mesh.map(([x, y]) => [x, y] as [number, number]) }));
      } finally {
        t.dispose();
      }
    });
    this.queue = run.catch(() => {});
    return run;
  }
}

let shared: HumanLandmarker | null = null;
/** The process-wide landmarker (warm engine: models stay loaded between jobs). */
export function faceLandmarker(): HumanLandmarker {
  shared ??= new HumanLandmarker();
  return shared;
}

/**
 * Detects on a copy decimated by an integer factor so that its longest side is at most `maxSide` (the detector
 * works at 128-256 px internally anyway), and maps the landmarks back to full-frame pixels.
 */
export async function detectFast(
  landmarker: FaceLandmarker,
  image: RgbImage,
  maxFaces = 1,
  maxSide = 256,
): Promise<Face[]> {
  const f = Math.max(1, Math.ceil(Math.max(image.width, image.height) / maxSide));
  if (f === 1) return landmarker.detect(image, maxFaces);
  const w = Math.floor(image.width / f);
  const h = Math.floor(image.height / f);
  const small = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    const row = y * f * image.width;
    for (let x = 0; x < w; x++) {
      const s = (row + x * f) * 3;
      const d = (y * w + x) * 3;
      small[d] = image.data[s]!;
      small[d + 1] = image.data[s + 1]!;
      small[d + 2] = image.data[s + 2]!;
    }
  }
  const faces = await landmarker.detect({ width: w, height: h, data: small }, maxFaces);
  return faces.map((face) => ({
    score: face.score,
    box: face.box.map((v) => v * f) as Face['box'],
    mesh: face.mesh.map(([x, y]) => [x * f + f / 2, y * f + f / 2] as [number, number]),
  }));
}
