#!/usr/bin/env bash
# Glewlwyd 2.7 (Debian's package, a C OAuth2/OpenID Connect server) as a benchmark peer of
# Gatehouse: its own config, SQLite file, log and pid file in DIR, listening on 127.0.0.1:PORT only.
#   scripts/peers/glewlwyd.sh start DIR PORT USERS  -> one line of JSON on stdout describing the peer
#   scripts/peers/glewlwyd.sh stop DIR
# Everything else goes to stderr. Knobs (environment):
#   GLEWLWYD_LOG_LEVEL        ERROR | WARNING (default) | INFO | DEBUG
#   GLEWLWYD_PBKDF2_ITERATIONS password hashing cost, default 150000 (the package's own default)
#   BENCH_SEED_JOBS           processes deriving password hashes, default nproc
#   BENCH_SEED_CACHE          1 (default): keep derived hashes in ${XDG_CACHE_HOME:-~/.cache}/gatehouse-bench
#                             so the next start with as many users or fewer skips the derivation
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}; dir=${2:-}
usage() { echo "usage: $0 start DIR PORT USERS | stop DIR" >&2; exit 2; }
[ -n "$cmd" ] && [ -n "$dir" ] || usage

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
    local pidfile=$dir/glewlwyd.pid
    if pid_alive "$pidfile"; then
        local pid; pid=$(cat "$pidfile")
        kill -TERM "$pid"
        # Glewlwyd closes its modules and the database on SIGTERM; give it a moment, then insist.
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
        echo "glewlwyd: stopped (pid $pid)" >&2
    fi
    rm -f "$pidfile"
}

install_glewlwyd() {
    if ! dpkg-query -W -f='${Status}' glewlwyd 2>/dev/null | grep -q 'ok installed'; then
        echo "glewlwyd: installing Debian's package" >&2
        export DEBIAN_FRONTEND=noninteractive
        # The package offers to set up a database through dbconfig; "No configuration" skips that
        # (the "Personalized" path fails non-interactively with dbconfig-no-thanks) and we bring
        # our own config and SQLite file anyway.
        echo 'glewlwyd glewlwyd/config_type select No configuration' | debconf-set-selections
        apt-get update -qq >&2
        apt-get install -y -qq --no-install-recommends glewlwyd dbconfig-no-thanks sqlite3 openssl curl python3 >&2
        # We never use the system service (Debian enables it); if the postinst started it, stop it
        # and keep it from starting at boot, so it holds no port and no database.
        if [ -d /run/systemd/system ]; then
            systemctl disable --now glewlwyd.service >/dev/null 2>&1 || true
        else
            if pid_alive /var/run/glewlwyd.pid; then kill "$(cat /var/run/glewlwyd.pid)" 2>/dev/null || true; fi
            update-rc.d glewlwyd disable >/dev/null 2>&1 || true
        fi
    fi
    if [ -d /run/systemd/system ] && systemctl is-active --quiet glewlwyd.service 2>/dev/null; then
        systemctl disable --now glewlwyd.service >/dev/null 2>&1 || true
    fi
    for tool in sqlite3 openssl curl python3; do
        command -v "$tool" >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >&2; }
    done
}

start() {
    local port=${3:-} users=${4:-}
    [[ "$port" =~ ^[0-9]+$ && "$users" =~ ^[0-9]+$ ]] || usage
    install_glewlwyd
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if pid_alive "$dir/glewlwyd.pid"; then
        echo "glewlwyd: already running in $dir (pid $(cat "$dir/glewlwyd.pid")); stop it first" >&2
        exit 1
    fi
    local base=http://127.0.0.1:$port db=$dir/glewlwyd.sqlite
    local iterations=${GLEWLWYD_PBKDF2_ITERATIONS:-150000}
    local cache=""
    [ "${BENCH_SEED_CACHE:-1}" = 1 ] && cache=${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse-bench/glewlwyd-pbkdf2-sha256-$iterations.tsv

    # A fresh database each start, from the schema script the package ships (all core, module and
    # plugin tables, plus the default admin/password user and the "database" user/client backends).
    rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
    zcat /usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz | sqlite3 "$db"

    # Signing key for ES256 access tokens, ID tokens and the published JWKS.
    openssl ecparam -name prime256v1 -genkey -noout -out "$dir/es256.key" 2>/dev/null
    openssl ec -in "$dir/es256.key" -pubout -out "$dir/es256.pub" 2>/dev/null
    local secret; secret=$(openssl rand -hex 24)
    echo "$secret" > "$dir/introspector.secret"

    nice -n 10 python3 "$here/glewlwyd_seed.py" --db "$db" --users "$users" --issuer "$base" \
        --key "$dir/es256.key" --pubkey "$dir/es256.pub" --introspector-secret "$secret" \
        --iterations "$iterations" --cache "$cache" --jobs "${BENCH_SEED_JOBS:-$(nproc)}"

    # The config file: only what differs from the built-in defaults or what we want pinned. There is
    # no thread setting: the HTTP layer (ulfius on libmicrohttpd) runs a thread per connection.
    cat > "$dir/glewlwyd.conf" <<EOF
port=$port
bind_address="127.0.0.1"
external_url="$base"
api_prefix="api"
login_url="login.html"
log_mode="file"
log_level="${GLEWLWYD_LOG_LEVEL:-WARNING}"
log_file="$dir/glewlwyd.log"
cookie_secure=0
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
# Digest of the tokens stored in the database (as in Debian's /etc/glewlwyd/glewlwyd.conf).
hash_algorithm="SHA512"
database = { type = "sqlite3"; path = "$db"; };
EOF

    # setsid: the server outlives this script in a session of its own; the inner shell writes its
    # own pid, which exec hands on to glewlwyd, so the pid file is right whether or not setsid forked.
    rm -f "$dir/glewlwyd.pid"
    (exec setsid bash -c 'echo $$ > "$0"; exec "$@"' "$dir/glewlwyd.pid" \
        glewlwyd --config-file="$dir/glewlwyd.conf" >"$dir/glewlwyd.out" 2>&1 </dev/null &)
    for _ in $(seq 1 100); do [ -s "$dir/glewlwyd.pid" ] && break; sleep 0.02; done
    local ready=0
    for _ in $(seq 1 300); do
        if curl -sf -o /dev/null "$base/api/oidc/jwks"; then ready=1; break; fi
        pid_alive "$dir/glewlwyd.pid" || break
        sleep 0.05
    done
    if [ "$ready" != 1 ]; then
        echo "glewlwyd: did not come up; last lines of its output and log:" >&2
        tail -n 20 "$dir/glewlwyd.out" "$dir/glewlwyd.log" >&2 2>/dev/null || true
        stop
        exit 1
    fi
    echo "glewlwyd: ready at $base (pid $(cat "$dir/glewlwyd.pid")), log $dir/glewlwyd.log" >&2

    python3 - "$base" "$users" "$secret" "$iterations" "$dir" "$(cat "$dir/glewlwyd.pid")" <<'PY'
import json, sys
base, users, secret, iterations, d, pid = sys.argv[1:]
print(json.dumps({
    "peer": "glewlwyd",
    "version": "2.7.5 (Debian bookworm package)",
    "base_url": base,
    "token_path": "/api/oidc/token",
    "introspect_path": "/api/oidc/introspect",
    "revoke_path": "/api/oidc/revoke",
    "jwks_path": "/api/oidc/jwks",
    "userinfo_path": "/api/oidc/userinfo",
    "discovery_path": "/api/oidc/.well-known/openid-configuration",
    "public_client_id": "bench",
    "login": "POST token_path, form grant_type=password&username=U&password=P&scope=bench, no client_id and no Authorization "
             "(a client_id without a secret gets 403: Glewlwyd's password grant only takes no client or a confidential one)",
    "refresh": "POST token_path, form grant_type=refresh_token&refresh_token=R, no client; answers a new refresh_token "
               "(one-time use: the old one then gets 400, and replaying it disables the newest of its chain)",
    "introspector_client_id": "introspector",
    "introspector_secret": secret,
    "client_credentials": "POST token_path, HTTP Basic introspector:secret (or client_id/client_secret in the form), "
                          "form grant_type=client_credentials&scope=bench (or introspect); 200 {access_token, token_type, expires_in, scope}",
    "introspect": "POST introspect_path, HTTP Basic introspector:secret, form token=T[&token_type_hint=access_token]; "
                  "answers {active:true, username, sub, aud, scope, exp, iat, nbf, jti, token_type} or {active:false}; "
                  "Authorization: Bearer <introspector client_credentials token, scope introspect> works too",
    "introspect_auth": "client_secret_basic",
    "scope": "bench",
    "scope_with_id_token": "openid bench",
    "users": int(users),
    "username_pattern": "bench-seed-{i}@example.com",
    "password_pattern": "bench password {i} seed",
    "access_token": "JWT ES256 (P-256), 3600 s, typ at+jwt; stored by SHA-512 digest in the database",
    "refresh_token": "opaque 128 characters, 1209600 s, one-time use (rotated on every refresh)",
    "password_hashing": f"PBKDF2-HMAC-SHA256, {iterations} iterations, 16-character salt, 32-byte key (libnettle)",
    "threads": "one thread per connection (ulfius/libmicrohttpd); all SQL over one SQLite connection",
    "database": f"{d}/glewlwyd.sqlite",
    "log": f"{d}/glewlwyd.log",
    "pid": int(pid),
}))
PY
}

case "$cmd" in
    start) start "$@" ;;
    stop) stop ;;
    *) usage ;;
esac
