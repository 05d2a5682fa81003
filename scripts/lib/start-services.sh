#!/usr/bin/env bash
# Starts Redis and Postgres when they are not answering. Never stops a server that is already up.
set -euo pipefail
source "$(dirname "$0")/common.sh"

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  log "starting redis-server on 127.0.0.1:6379"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --maxmemory-policy noeviction --dir /var/lib/redis --logfile /var/log/redis/vap.log
  for _ in $(seq 1 50); do redis-cli ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  major=$(pg_major_version)
  if ! pg_lsclusters -h 2>/dev/null | grep -q "^$major "; then
    log "creating postgres cluster $major/main"
    as_root pg_createcluster "$major" main
  fi
  log "starting postgres $major"
  as_root pg_ctlcluster --skip-systemctl-redirect "$major" main start || true
  for _ in $(seq 1 100); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.2; done
  pg_isready -h 127.0.0.1 -p 5432 -q || { log "postgres did not start"; exit 1; }
fi
