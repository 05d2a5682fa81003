#!/usr/bin/env bash
# Local TTS: builds flite-server, the long-lived flite worker the default TTS engine keeps a pool of (no process
# per sentence), into build/flite-server/. Installs Debian's flite1-dev (headers) when missing. Rebuilds only when
# the source is newer than the binary. Without it the engine falls back to one flite process per sentence.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

src=shared/engines/tts/flite-server/flite-server.c
out=build/flite-server/flite-server
if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt shared/engines/tts/worker-protocol.h ]; then
  log "flite-server: ok"
  exit 0
fi
if [ ! -f /usr/include/flite/flite.h ]; then
  log "flite-server: installing flite1-dev"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends flite1-dev ||
    { as_root apt-get update -q && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends flite1-dev; }
fi
mkdir -p "$(dirname "$out")"
cc -O2 -Wall -o "$out.tmp" "$src" \
  -lflite_cmu_us_kal16 -lflite_cmu_us_slt -lflite_cmu_us_rms -lflite_cmu_us_awb \
  -lflite_usenglish -lflite_cmulex -lflite -lm
mv "$out.tmp" "$out"
log "flite-server: built $out"
