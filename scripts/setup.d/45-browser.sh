#!/usr/bin/env bash
# Test tool: Debian's chromium, which the portal's end-to-end tests drive through puppeteer-core (it downloads no
# browser of its own). Development machines only; the images do not need it.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

if ! command -v chromium >/dev/null 2>&1; then
  log "portal: installing chromium (browser tests)"
  # The package lists may be stale on a fresh machine: refresh them once when the first try cannot find it.
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; then
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
  fi
fi
