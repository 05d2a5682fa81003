#!/usr/bin/env bash
# Local live STT: builds ps-stream, the long-lived streaming pocketsphinx worker the realtime path keeps a few of
# (shared/engines/stt/pocketsphinx-live.ts), into build/ps-stream/. Installs Debian's libpocketsphinx-dev and
# libsphinxbase-dev (headers) when missing. Rebuilds when the source changed since the binary was built (its hash,
# kept beside the binary: a newer binary, e.g. one copied over or built from an older checkout, is no proof). Without it,
# calls on the local STT fall back to batch pocketsphinx per utterance (slower; logged at start).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

src=shared/engines/stt/pocketsphinx-stream/ps-stream.c
out=${PS_STREAM_OUT:-build/ps-stream/ps-stream}
stamp="$out.src-sha256"
want=$(sha256sum "$src" | cut -d' ' -f1)
if [ -x "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  log "ps-stream: ok"
  exit 0
fi
if [ ! -f /usr/include/pocketsphinx/pocketsphinx.h ] || ! pkg-config --exists pocketsphinx sphinxbase 2>/dev/null; then
  log "ps-stream: installing libpocketsphinx-dev libsphinxbase-dev"
  pkgs=(libpocketsphinx-dev libsphinxbase-dev pkg-config)
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" ||
    { as_root apt-get update -q && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}"; }
fi
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2046 # pkg-config prints several flags
cc -O2 -Wall -o "$out.tmp" "$src" $(pkg-config --cflags --libs pocketsphinx sphinxbase) -lm
mv "$out.tmp" "$out"
echo "$want" >"$stamp"
log "ps-stream: built $out"
