#!/usr/bin/env bash
# Video area: checks what the default video engines need and installs what is missing. Idempotent and fast
# when done. apt packages come from scripts/setup.sh's list (ffmpeg, flite, espeak-ng, pocketsphinx,
# tesseract-ocr, apertium + pairs); this adds the font the title-card engine draws with.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf ]; then
  log "video: installing fonts-dejavu-core (title-card generator)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends fonts-dejavu-core
fi

missing=()
for bin in ffmpeg ffprobe flite espeak-ng tesseract apertium pocketsphinx_continuous; do
  command -v "$bin" >/dev/null 2>&1 || missing+=("$bin")
done
[ ${#missing[@]} -eq 0 ] || log "video: WARNING missing tools: ${missing[*]} (run scripts/setup.sh)"

for mode in eng-spa spa-eng en-eo eo-en; do
  [ -f "/usr/share/apertium/modes/$mode.mode" ] || log "video: note: Apertium pair $mode not installed"
done

# Face landmarks: @vladmandic/human (models inside the package) on the TensorFlow.js WASM backend.
for pkg in @vladmandic/human/models/facemesh.json @tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm; do
  [ -f "node_modules/$pkg" ] || log "video: WARNING node_modules/$pkg missing (npm install)"
done
log "video: ok"
