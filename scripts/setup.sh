#!/usr/bin/env bash
# Idempotent machine set-up for a fresh Debian 12 host (which comes with Node 20), run as root (sudo is used when
# not root). Installs what is missing (Node LTS, apt packages, pgvector, npm deps with `npm ci`), starts Redis and
# Postgres when they are not answering, creates the database role, then runs every scripts/setup.d/*.sh step.
# Fast when nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

# Node LTS first: npm dependencies are installed by (and, for native ones, built for) the Node that runs them.
export PATH="/usr/local/bin:$PATH"
bash scripts/lib/install-node.sh
hash -r
# node-gyp builds use the installed headers instead of downloading them (nothing outside the registries is reachable).
[ -d /usr/local/lib/nodejs/current/include/node ] && export npm_config_nodedir=/usr/local/lib/nodejs/current

log "checking system packages"
APT_PACKAGES=(ffmpeg flite espeak-ng pocketsphinx pocketsphinx-en-us libpocketsphinx-dev libsphinxbase-dev pkg-config tesseract-ocr tesseract-ocr-eng apertium
  apertium-en-es apertium-eo-en apertium-es-pt apertium-es-it apertium-es-ca apertium-es-gl apertium-es-ro apertium-fr-es
  apertium-en-ca apertium-en-gl redis-server postgresql postgresql-contrib build-essential dpkg-dev sox fonts-dejavu-core curl ca-certificates)
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
pg_major=$(pg_major_version)
if [ -n "$pg_major" ] && ! dpkg -s "postgresql-server-dev-$pg_major" >/dev/null 2>&1; then
  missing+=("postgresql-server-dev-$pg_major")
fi
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  pg_major=$(pg_major_version)
  dpkg -s "postgresql-server-dev-$pg_major" >/dev/null 2>&1 ||
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-server-dev-$pg_major"
fi

bash scripts/lib/start-services.sh
bash scripts/lib/install-pgvector.sh "$pg_major"
bash scripts/lib/create-database.sh

# `npm ci` installs exactly the lock file and fails when it is out of sync with package.json (so does CI, and so
# would the images). Reinstalled when the lock or the Node major changes; the stamp records both.
stamp="$(node -p 'process.versions.node.split(".")[0]') $(sha256sum package-lock.json | cut -c1-64)"
if [ ! -f node_modules/.install-stamp ] || [ "$(cat node_modules/.install-stamp)" != "$stamp" ]; then
  log "installing npm dependencies (npm ci)"
  # onnxruntime-node's download is skipped by the project's .npmrc (onnxruntime-node-install=skip).
  npm ci --no-audit --no-fund
  echo "$stamp" >node_modules/.install-stamp
fi

for step in scripts/setup.d/*.sh; do
  [ -e "$step" ] || continue
  bash "$step"
done
log "setup complete"
