#!/usr/bin/env bash
# Developer portal: builds portal/ into portal/dist (hashed assets + .gz/.br) when a source is newer than the
# last build. Fast when nothing changed. (The images run this step in their portal stage.)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

stamp=portal/dist/.build-stamp
newer=""
if [ -f "$stamp" ]; then
  newer=$(find portal/index.html portal/vite.config.ts portal/tsconfig.json portal/src shared/contracts shared/kernel/vendors.ts package-lock.json \
    -newer "$stamp" -print -quit 2>/dev/null || true)
fi
if [ ! -f "$stamp" ] || [ -n "$newer" ]; then
  log "portal: building portal/dist"
  npx vite build --config portal/vite.config.ts --logLevel warn
  touch "$stamp"
else
  log "portal: build up to date"
fi
