#!/usr/bin/env bash
# Run a command against a throwaway PostgreSQL cluster:
#   bash tests/with_postgres.sh .venv/bin/python -m pytest tests/db
# The cluster (Debian's postgresql package: initdb, pg_ctl) lives in a temp folder, listens only
# on a unix socket in that folder (no TCP port), and is stopped and removed when the command ends,
# whatever its outcome. The command sees REELROOM_TEST_DATABASE_URL (the cluster's maintenance
# database; the test fixtures create and drop one database per server) and keeps its exit status.
set -euo pipefail

bindir=""
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
  if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then bindir=$d; break; fi
done
if [ -z "$bindir" ] && command -v initdb >/dev/null 2>&1; then bindir=$(dirname "$(command -v initdb)"); fi
if [ -z "$bindir" ]; then
  echo "with_postgres.sh: PostgreSQL's initdb was not found (apt-get install postgresql)" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/reelroom-pg.XXXXXX")
# PostgreSQL refuses to run as root: as root the cluster belongs to the postgres user (made by
# the Debian package) and the folder is handed to it.
as_owner=()
if [ "$(id -u)" = 0 ]; then
  owner=postgres
  id -u "$owner" >/dev/null 2>&1 || owner=nobody
  chown "$owner" "$tmp"
  as_owner=(runuser -u "$owner" --)
fi

cleanup() {
  local status=$?
  if [ -f "$tmp/data/postmaster.pid" ]; then
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"${as_owner[@]}" "$bindir/initdb" -D "$tmp/data" -U reelroom --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
  --no-sync >"$tmp/initdb.log" 2>&1 || { cat "$tmp/initdb.log" >&2; exit 2; }
# Durability off: a test cluster that is thrown away needs no fsync, and this keeps CI quick.
"${as_owner[@]}" "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 60 start -o \
  "-c listen_addresses='' -k $tmp -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
   -c max_connections=300 -c shared_buffers=64MB" >/dev/null || { cat "$tmp/server.log" >&2; exit 2; }

export REELROOM_TEST_DATABASE_URL="postgresql+psycopg://reelroom@/postgres?host=$tmp"
echo "with_postgres.sh: PostgreSQL $("$bindir/postgres" -V | awk '{print $3}') at $tmp" >&2
set +e
"$@"
status=$?
set -e
exit "$status"
