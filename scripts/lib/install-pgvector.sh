#!/usr/bin/env bash
# Debian 12 ships no pgvector binary. Build it from the newer Debian suite's source package, with a deb-src
# entry derived from this machine's own apt configuration (never a hard-coded mirror).
set -euo pipefail
source "$(dirname "$0")/common.sh"
major=${1:-$(pg_major_version)}
pg_config=/usr/lib/postgresql/$major/bin/pg_config
[ -x "$pg_config" ] || pg_config=$(command -v pg_config)
if [ -f "$("$pg_config" --sharedir)/extension/vector.control" ]; then exit 0; fi

log "building pgvector for postgres $major from Debian sources"
mirror=$(grep -rhoE '^URIs: *http[^ ]+' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n1 | awk '{print $2}')
if [ -z "$mirror" ]; then
  mirror=$(grep -rhE '^deb +http' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -v security | head -n1 | awk '{print $2}')
fi
[ -n "$mirror" ] || { log "no Debian mirror found in the apt configuration"; exit 1; }
list=/etc/apt/sources.list.d/vap-pgvector-src.sources
if [ ! -f "$list" ]; then
  printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror" | as_root tee "$list" >/dev/null
  as_root apt-get update -q
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source -q --download-only pgvector >/dev/null && dpkg-source -x --no-check ./pgvector_*.dsc src >/dev/null)
make -s -C "$work/src" PG_CONFIG="$pg_config" >/dev/null
as_root make -s -C "$work/src" PG_CONFIG="$pg_config" install >/dev/null
log "pgvector installed"
