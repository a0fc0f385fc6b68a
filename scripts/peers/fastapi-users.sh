#!/usr/bin/env bash
# fastapi-users (PyPI) as a benchmark peer of Gatehouse: scripts/peers/fastapi_users_app.py under
# uvicorn, one worker per core, SQLite file in DIR, listening on 127.0.0.1:PORT only.
#   scripts/peers/fastapi-users.sh start DIR PORT USERS  -> one line of JSON on stdout describing the peer
#   scripts/peers/fastapi-users.sh stop DIR
# Everything else goes to stderr. The virtualenv lives in
# ${XDG_CACHE_HOME:-~/.cache}/gatehouse-bench/fastapi-venv and is reused while its pins match.
# Knobs (environment):
#   FASTAPI_USERS_WORKERS  uvicorn workers, default nproc
#   BENCH_SEED_JOBS        processes hashing passwords while seeding, default nproc
#   BENCH_SEED_CACHE       1 (default): keep derived hashes in ${XDG_CACHE_HOME:-~/.cache}/gatehouse-bench
#                          so the next start with as many users or fewer skips the hashing
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}; dir=${2:-}
usage() { echo "usage: $0 start DIR PORT USERS | stop DIR" >&2; exit 2; }
[ -n "$cmd" ] && [ -n "$dir" ] || usage

cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse-bench
venv=$cache_root/fastapi-venv
# Pinned so that every run measures the same code; the rest of the tree is whatever pip resolves
# for these (recorded in DIR/pip-freeze.txt at each start).
pins=(
    "fastapi-users[sqlalchemy]==15.0.5"
    "fastapi-users-db-sqlalchemy==7.0.0"
    "fastapi==0.165.0"
    "pwdlib==0.3.0"
    "argon2-cffi==25.1.0"
    "argon2-cffi-bindings==26.2.0"
    "pyjwt==2.15.1"
    "sqlalchemy==2.0.58"
    "aiosqlite==0.22.1"
    "uvicorn[standard]==0.54.0"
    "uvloop==0.23.0"
    "httptools==0.9.0"
)

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
    local pidfile=$dir/uvicorn.pid
    if pid_alive "$pidfile"; then
        local pid; pid=$(cat "$pidfile")
        # The uvicorn supervisor stops its workers on SIGTERM; it was started with setsid, so its
        # process group is exactly the server (supervisor and workers), which catches any straggler.
        kill -TERM "$pid"
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- "-$pid" 2>/dev/null || true
        echo "fastapi-users: stopped (pid $pid)" >&2
    fi
    rm -f "$pidfile"
}

ensure_venv() {
    local python=/usr/bin/python3
    if [ ! -x "$python" ] || ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
        echo "fastapi-users: installing python3 and python3-venv" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq python3 python3-venv curl >&2
    fi
    command -v curl >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >&2; }
    local stamp=$venv/.gatehouse-pins want
    want=$(printf '%s\n' "${pins[@]}")
    if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        return
    fi
    echo "fastapi-users: preparing $venv" >&2
    mkdir -p "$cache_root"
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    # Wheels only: nothing is compiled on the benchmark machine.
    "$venv/bin/pip" install -q --disable-pip-version-check --only-binary=:all: "${pins[@]}" >&2
    echo "$want" > "$stamp"
}

start() {
    local port=${3:-} users=${4:-}
    [[ "$port" =~ ^[0-9]+$ && "$users" =~ ^[0-9]+$ ]] || usage
    ensure_venv
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if pid_alive "$dir/uvicorn.pid"; then
        echo "fastapi-users: already running in $dir (pid $(cat "$dir/uvicorn.pid")); stop it first" >&2
        exit 1
    fi
    local base=http://127.0.0.1:$port workers=${FASTAPI_USERS_WORKERS:-$(nproc)}
    "$venv/bin/pip" freeze > "$dir/pip-freeze.txt"

    rm -f "$dir/users.sqlite" "$dir/users.sqlite-journal" "$dir/users.sqlite-wal" "$dir/users.sqlite-shm"
    [ -f "$dir/jwt.secret" ] || openssl rand -hex 32 > "$dir/jwt.secret" 2>/dev/null || "$venv/bin/python" -c 'import secrets; print(secrets.token_hex(32))' > "$dir/jwt.secret"
    export FASTAPI_USERS_DATABASE_URL="sqlite+aiosqlite:///$dir/users.sqlite"
    FASTAPI_USERS_SECRET=$(cat "$dir/jwt.secret")
    export FASTAPI_USERS_SECRET
    export BENCH_SEED_JOBS=${BENCH_SEED_JOBS:-$(nproc)}
    export BENCH_SEED_CACHE_DIR=""
    [ "${BENCH_SEED_CACHE:-1}" = 1 ] && BENCH_SEED_CACHE_DIR=$cache_root

    local seeded_at; seeded_at=$(date +%s.%N)
    (cd "$here" && nice -n 10 "$venv/bin/python" fastapi_users_app.py seed "$users")
    echo "fastapi-users: seeding took $(python3 -c "print(f'{$(date +%s.%N) - $seeded_at:.1f}')") s" >&2

    # One worker per core (processes started by uvicorn's supervisor, sharing its listening
    # socket); no access log, warnings only; uvloop and httptools are picked up by "auto".
    # setsid: the server outlives this script in a session (and process group) of its own; the
    # inner shell writes its own pid, which exec hands on to uvicorn, so the pid file is right
    # whether or not setsid had to fork.
    rm -f "$dir/uvicorn.pid"
    (cd "$here" && exec setsid bash -c 'echo $$ > "$0"; exec "$@"' "$dir/uvicorn.pid" \
        "$venv/bin/uvicorn" fastapi_users_app:app --host 127.0.0.1 --port "$port" \
        --workers "$workers" --no-access-log --log-level warning --loop auto --http auto \
        >"$dir/uvicorn.log" 2>&1 </dev/null &)
    for _ in $(seq 1 100); do [ -s "$dir/uvicorn.pid" ] && break; sleep 0.02; done
    # Ready = the app answers (401 for /users/me without a token) and every worker has started:
    # workers log nothing at "warning", so count the supervisor's children that are workers
    # (multiprocessing's resource tracker is a child too, and is not one).
    local ready=0
    for _ in $(seq 1 600); do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/users/me" || true)" = 401 ] &&
           [ "$(pgrep -f -P "$(cat "$dir/uvicorn.pid")" spawn_main | wc -l)" -ge "$workers" ]; then
            ready=1; break
        fi
        pid_alive "$dir/uvicorn.pid" || break
        sleep 0.05
    done
    if [ "$ready" != 1 ]; then
        echo "fastapi-users: did not come up; last lines of its log:" >&2
        tail -n 30 "$dir/uvicorn.log" >&2 || true
        stop
        exit 1
    fi
    # Warm-up: a few requests so that the first timed ones don't pay for lazy set-up.
    for _ in $(seq 1 20); do curl -s -o /dev/null "$base/users/me" || true; done
    echo "fastapi-users: ready at $base (supervisor pid $(cat "$dir/uvicorn.pid"), $workers workers)" >&2

    "$venv/bin/python" - "$base" "$users" "$workers" "$dir" "$(cat "$dir/uvicorn.pid")" <<'PY'
import json, sys
from importlib.metadata import version
from argon2 import profiles
base, users, workers, d, pid = sys.argv[1:]
p = profiles.get_default_parameters()
print(json.dumps({
    "peer": "fastapi-users",
    "version": f"fastapi-users {version('fastapi-users')}, fastapi {version('fastapi')}, uvicorn {version('uvicorn')}, "
               f"SQLAlchemy {version('sqlalchemy')}, aiosqlite {version('aiosqlite')}, pwdlib {version('pwdlib')}, "
               f"argon2-cffi {version('argon2-cffi')}",
    "base_url": base,
    "login_path": "/auth/jwt/login",
    "login": "POST login_path, application/x-www-form-urlencoded username=EMAIL&password=P; "
             "200 {access_token, token_type: bearer}, 400 {detail: LOGIN_BAD_CREDENTIALS}, 422 if a field is missing",
    "me_path": "/users/me",
    "me": "GET me_path, Authorization: Bearer T; 200 {id, email, is_active, is_superuser, is_verified}, 401 otherwise",
    "logout_path": "/auth/jwt/logout",
    "refresh": None,
    "introspect": None,
    "jwks": None,
    "users": int(users),
    "username_pattern": "bench-seed-{i}@example.com",
    "password_pattern": "bench password {i} seed",
    "password_hashing": f"Argon2{p.type.name.lower()} v={p.version}, m={p.memory_cost} KiB, t={p.time_cost}, p={p.parallelism}, "
                        f"salt {p.salt_len} B, hash {p.hash_len} B (pwdlib Argon2Hasher defaults = argon2-cffi RFC_9106_LOW_MEMORY)",
    "access_token": "JWT HS256, 3600 s, claims sub (user UUID), aud [fastapi-users:auth], exp; stateless (nothing stored)",
    "workers": int(workers),
    "server": "uvicorn --workers N, uvloop + httptools, no access log, log level warning; one event loop per worker, "
              "password hashing runs on it (blocks that worker for the hash time)",
    "database": f"{d}/users.sqlite",
    "log": f"{d}/uvicorn.log",
    "pid": int(pid),
}))
PY
}

case "$cmd" in
    start) start "$@" ;;
    stop) stop ;;
    *) usage ;;
esac
