# Helpers shared by the set-up scripts.
log() { printf '\033[36m[setup]\033[0m %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi; }
# Major version of the newest installed Postgres server (empty when none is installed).
pg_major_version() { ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1; }
