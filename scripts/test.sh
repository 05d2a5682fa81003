#!/usr/bin/env bash
# The whole suite, after the same idempotent set-up as `npm run up`: lint + format check, typecheck,
# circular-import check, then unit and integration tests against real Postgres, Redis, S3 server and ffmpeg.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The set-up may have just installed the Node LTS into /usr/local/bin: use it from here on.
export PATH="/usr/local/bin:$PATH"
hash -r
export NODE_OPTIONS="${NODE_OPTIONS:-} --no-deprecation"
echo "== lint"; npx eslint . && npx prettier --check . >/dev/null
echo "== typecheck"; npx tsc --noEmit -p tsconfig.json && npx tsc --noEmit -p portal/tsconfig.json
echo "== circular imports"; npx madge --circular --extensions ts --ts-config tsconfig.json api shared workers scripts benchmarks support
echo "== tests"; npx vitest run "$@"
