#!/usr/bin/env bash
# Local STT biasing: installs Debian's sphinxbase-utils for `sphinx_lm_convert`, which stores each per-agent language
# model in sphinxbase's binary form (a decoder loads it in about a third of the time of the ARPA text). Optional:
# without it the models stay ARPA and work the same, only slower to load (docs/speech.md, "Biasing").
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

if command -v sphinx_lm_convert >/dev/null 2>&1; then
  log "local-stt: sphinx_lm_convert ok"
  exit 0
fi
log "local-stt: installing sphinxbase-utils"
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends sphinxbase-utils ||
  { as_root apt-get update -q && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends sphinxbase-utils; } ||
  log "local-stt: sphinxbase-utils not installed; per-agent models stay ARPA text"
