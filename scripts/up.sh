#!/usr/bin/env bash
# One command from a fresh machine to a running platform: set-up (idempotent), then every role in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export NODE_OPTIONS="${NODE_OPTIONS:-} --no-deprecation"
exec npx tsx scripts/start.ts all
