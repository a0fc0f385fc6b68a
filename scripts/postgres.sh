#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 on 127.0.0.1 for tests and benchmarks, installing Debian's package
# when it is missing.
#   scripts/postgres.sh start DIR PORT   -> prints the admin URL
#   scripts/postgres.sh stop DIR
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?data directory}; port=${3:-54329}
bin=/usr/lib/postgresql/15/bin
if [ "$cmd" = stop ]; then
    [ -d "$dir/data" ] && runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    exit 0
fi
if [ ! -x "$bin/pg_ctl" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql-15 >&2
fi
mkdir -p "$dir"
chown postgres "$dir"
runuser -u postgres -- "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 >/dev/null
runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-h 127.0.0.1 -p $port -k $dir -c fsync=on -c max_connections=200" start >/dev/null
echo "postgres://postgres@127.0.0.1:$port/postgres"
