#!/usr/bin/env bash
# Video area: checks that what the default video engines need is present (the apt packages, the title-card
# font included, come from scripts/setup.sh's list) and says what is missing. Fast; changes nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf ] || log "video: WARNING fonts-dejavu-core missing (title card)"

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
