#!/usr/bin/env bash
# Developer portal: builds portal/ into portal/dist (hashed assets + .gz/.br) when a source is newer than the
# last build, and installs Debian's chromium for the portal's browser tests. Fast when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

stamp=portal/dist/.build-stamp
newer=""
if [ -f "$stamp" ]; then
  newer=$(find portal/index.html portal/vite.config.ts portal/tsconfig.json portal/src package-lock.json \
    -newer "$stamp" -print -quit 2>/dev/null || true)
fi
if [ ! -f "$stamp" ] || [ -n "$newer" ]; then
  log "portal: building portal/dist"
  npx vite build --config portal/vite.config.ts --logLevel warn
  touch "$stamp"
else
  log "portal: build up to date"
fi

# The end-to-end tests drive this browser through puppeteer-core (which downloads none of its own).
if ! command -v chromium >/dev/null 2>&1; then
  log "portal: installing chromium (browser tests)"
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; then
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
  fi
fi
