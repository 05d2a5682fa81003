#!/usr/bin/env bash
# One command from a fresh machine to a running platform: set-up (idempotent), then every role in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The set-up may have just installed the Node LTS into /usr/local/bin: use it from here on.
export PATH="/usr/local/bin:$PATH"
hash -r
export NODE_OPTIONS="${NODE_OPTIONS:-} --no-deprecation"
exec npx tsx scripts/start.ts all
