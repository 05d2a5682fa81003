#!/usr/bin/env bash
# Creates the local role and database the defaults point at (postgres://vap:vap@127.0.0.1:5432/vap).
# The role is a superuser so that migrations can CREATE EXTENSION and tests can create throwaway databases.
set -euo pipefail
source "$(dirname "$0")/common.sh"
psql_admin() { as_postgres psql -X -q -v ON_ERROR_STOP=1 "$@"; }
if ! psql_admin -tAc "select 1 from pg_roles where rolname='vap'" | grep -q 1; then
  log "creating postgres role vap"
  psql_admin -c "create role vap login superuser password 'vap'"
fi
if ! psql_admin -tAc "select 1 from pg_database where datname='vap'" | grep -q 1; then
  log "creating database vap"
  psql_admin -c "create database vap owner vap"
fi
