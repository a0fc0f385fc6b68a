#!/usr/bin/env python3
"""Writes a benchmark set-up straight into a fresh Glewlwyd 2.7 SQLite database.

Used by scripts/peers/glewlwyd.sh before the server starts: Glewlwyd reads its plugin instances at
start-up, and users and clients are plain rows, so writing everything first means one start, no
admin session and no per-user HTTP round trip.

What it writes:
  - the OpenID Connect plugin instance "oidc" (endpoints under /api/oidc/), ES256-signed tokens;
  - scopes "bench" (what the users log in for) and "introspect" (lets a client_credentials token
    of the introspector call /introspect as a Bearer token, besides Basic auth);
  - clients "bench" (public) and "introspector" (confidential, plain client_secret, the
    client_credentials grant with scope bench or introspect);
  - USERS users bench-seed-I@example.com / "bench password I seed" with scopes bench + openid.

Password format (the database user backend on SQLite, libusermoddatabase.so of 2.7.5; checked by
creating a user through the admin API and re-deriving its stored value): PBKDF2-HMAC-SHA256 with
a 16-character alphanumeric salt, 32-byte key, stored as
    base64(key || salt) + "," + iterations
and 150000 iterations when the module's "pbkdf2-iterations" parameter is unset (the admin UI's
default is the same 15e4). Deriving 150000 iterations costs ~30 ms of one core per user, so the
derived hashes are cached (keyed by the iteration count) and computed on several processes.

Only the standard library is used, so Debian's python3 is enough.
"""
import argparse
import base64
import hashlib
import json
import multiprocessing
import os
import re
import secrets
import sqlite3
import string
import sys
import time

SALT_ALPHABET = string.ascii_letters + string.digits


def log(message):
    print(f"glewlwyd seed: {message}", file=sys.stderr, flush=True)


def username(i):
    return f"bench-seed-{i}@example.com"


def password(i):
    return f"bench password {i} seed"


def derive(job):
    """One stored password value in Glewlwyd's format (see the module docstring)."""
    i, iterations = job
    salt = "".join(secrets.choice(SALT_ALPHABET) for _ in range(16)).encode()
    key = hashlib.pbkdf2_hmac("sha256", password(i).encode(), salt, iterations, 32)
    return i, base64.b64encode(key + salt).decode() + f",{iterations}"


def load_hashes(users, iterations, cache_path, jobs):
    """Hashes for users 0..users-1: from the cache where present, derived (and appended) otherwise."""
    hashes = {}
    if cache_path and os.path.exists(cache_path):
        complete = re.compile(r"(\d+)\t([A-Za-z0-9+/]{64},%d)\n" % iterations)
        with open(cache_path) as cache:
            for line in cache:
                # Only whole lines of this iteration count: a run cut short may leave half a line.
                match = complete.fullmatch(line)
                if match and int(match[1]) < users:
                    hashes[int(match[1])] = match[2]
        log(f"{len(hashes)} of {users} password hashes from the cache {cache_path}")
    missing = [(i, iterations) for i in range(users) if i not in hashes]
    if not missing:
        return hashes
    log(f"deriving {len(missing)} PBKDF2-SHA256 hashes ({iterations} iterations) on {jobs} processes")
    cache = None
    if cache_path:
        os.makedirs(os.path.dirname(cache_path), exist_ok=True)
        cache = open(cache_path, "a")
    started = last = time.monotonic()
    with multiprocessing.Pool(jobs) as pool:
        for done, (i, value) in enumerate(pool.imap_unordered(derive, missing, chunksize=16), 1):
            hashes[i] = value
            if cache:
                # Appended as they come, so an interrupted run keeps its work.
                cache.write(f"{i}\t{value}\n")
                cache.flush()
            now = time.monotonic()
            if now - last >= 5 or done == len(missing):
                last = now
                rate = done / max(now - started, 1e-9)
                log(f"  {done}/{len(missing)} hashes, {rate:.0f}/s, {(len(missing) - done) / rate:.0f} s left")
    if cache:
        cache.close()
    return hashes


def plugin_parameters(args):
    # Names and meanings: /usr/share/doc/glewlwyd/OIDC.md.gz and the defaults of the admin UI
    # (/usr/share/glewlwyd/webapp/admin.js). Only what the benchmark uses is switched on.
    return {
        "iss": args.issuer,
        "jwt-type": "ecdsa",
        "jwt-key-size": "256",  # with an EC P-256 key: ES256
        "key": open(args.key).read(),
        "cert": open(args.pubkey).read(),
        "access-token-duration": 3600,
        "refresh-token-duration": 1209600,
        "code-duration": 600,
        # "Rolling" in Glewlwyd only resets a refresh token's issued-at on use (sliding expiry);
        # rotation is "one-time use": each refresh answers a new refresh token and disables the
        # old one, and a replay of a used one disables the newest of the chain.
        "refresh-token-rolling": True,
        "refresh-token-one-use": "always",
        "client-refresh-token-one-use-parameter": "refresh-token-one-use",
        # The password and client_credentials grants are "non-OIDC" OAuth2 requests here.
        "allow-non-oidc": True,
        "auth-type-code-enabled": False,
        "auth-type-token-enabled": False,
        "auth-type-id-token-enabled": True,  # forced on by the plugin anyway
        "auth-type-none-enabled": False,
        "auth-type-password-enabled": True,
        "auth-type-client-enabled": True,
        "auth-type-device-enabled": False,
        "auth-type-refresh-enabled": True,
        "scope": [],
        "additional-parameters": [],
        "claims": [],
        "email-claim": "mandatory",  # /userinfo answers the e-mail too, like /users/me elsewhere
        "jwks-show": True,
        "subject-type": "public",
        "allowed-scope": ["openid", "bench"],
        # RFC 7662 /introspect (and /revoke): "allow-target-client" lets a confidential client with
        # the client_credentials grant authenticate with HTTP Basic; "auth-scope" also accepts
        # "Authorization: Bearer <access token with scope introspect>". With an auth scope set, the
        # answer covers any token; without one, a Basic-authenticated client would only ever see
        # its own tokens (active=false for users' tokens).
        "introspection-revocation-allowed": True,
        "introspection-revocation-auth-scope": ["introspect"],
        "introspection-revocation-allow-target-client": True,
        "register-client-allowed": False,
        "session-management-allowed": False,
        "pkce-allowed": False,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--users", type=int, required=True)
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--key", required=True, help="PEM EC private key")
    parser.add_argument("--pubkey", required=True, help="PEM EC public key")
    parser.add_argument("--introspector-secret", required=True)
    parser.add_argument("--iterations", type=int, default=150000)
    parser.add_argument("--cache", default="", help="hash cache file, '' for none")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    started = time.monotonic()
    hashes = load_hashes(args.users, args.iterations, args.cache, max(args.jobs, 1))

    db = sqlite3.connect(args.db)
    db.execute("PRAGMA foreign_keys = ON")
    with db:  # one transaction
        # The user backend created by the schema script: keep it, but pin the iteration count so
        # that passwords Glewlwyd itself writes match the seeded ones.
        row = db.execute("SELECT gumi_parameters FROM g_user_module_instance WHERE gumi_name = 'database'").fetchone()
        params = json.loads(row[0])
        params["pbkdf2-iterations"] = args.iterations
        db.execute("UPDATE g_user_module_instance SET gumi_parameters = ? WHERE gumi_name = 'database'",
                   (json.dumps(params),))

        db.execute("INSERT INTO g_plugin_module_instance (gpmi_module, gpmi_name, gpmi_display_name, gpmi_parameters, gpmi_enabled)"
                   " VALUES ('oidc', 'oidc', 'OpenID Connect (benchmark)', ?, 1)", (json.dumps(plugin_parameters(args)),))

        for scope, description in (("bench", "Benchmark user scope"), ("introspect", "May call /introspect")):
            db.execute("INSERT INTO g_scope (gs_name, gs_display_name, gs_description, gs_password_required, gs_password_max_age)"
                       " VALUES (?, ?, ?, 0, 0)", (scope, scope, description))

        def add_client(client_id, confidential, scopes, properties):
            gc_id = db.execute("INSERT INTO g_client (gc_client_id, gc_name, gc_description, gc_confidential, gc_enabled)"
                               " VALUES (?, ?, 'benchmark client', ?, 1)", (client_id, client_id, int(confidential))).lastrowid
            db.executemany("INSERT INTO g_client_property (gc_id, gcp_name, gcp_value) VALUES (?, ?, ?)",
                           [(gc_id, name, value) for name, value in properties])
            for scope in scopes:
                db.execute("INSERT OR IGNORE INTO g_client_scope (gcs_name) VALUES (?)", (scope,))
                db.execute("INSERT INTO g_client_scope_client (gc_id, gcs_id)"
                           " SELECT ?, gcs_id FROM g_client_scope WHERE gcs_name = ?", (gc_id, scope))

        # Public client: kept for completeness, but Glewlwyd's password grant refuses a client_id
        # without a secret (403), so logins are sent with no client at all (see glewlwyd.sh).
        add_client("bench", False, ["bench", "openid"],
                   [("authorization_type", "password"), ("authorization_type", "refresh_token")])
        # A confidential client must list token_endpoint_auth_method, or every authentication
        # of it fails; client_secret is compared as stored (no hashing per request). Its
        # client_credentials tokens may carry "bench" (what a load generator asks for by default)
        # or "introspect".
        add_client("introspector", True, ["introspect", "bench"],
                   [("client_secret", args.introspector_secret),
                    ("token_endpoint_auth_method", "client_secret_basic"),
                    ("token_endpoint_auth_method", "client_secret_post"),
                    ("authorization_type", "client_credentials")])

        user_scope_ids = []
        for scope in ("bench", "openid"):
            db.execute("INSERT OR IGNORE INTO g_user_scope (gus_name) VALUES (?)", (scope,))
            user_scope_ids.append(db.execute("SELECT gus_id FROM g_user_scope WHERE gus_name = ?", (scope,)).fetchone()[0])

        first = db.execute("SELECT COALESCE(MAX(gu_id), 0) + 1 FROM g_user").fetchone()[0]
        rows = [(first + i, username(i), "", username(i)) for i in range(args.users)]
        db.executemany("INSERT INTO g_user (gu_id, gu_username, gu_name, gu_email, gu_enabled) VALUES (?, ?, ?, ?, 1)", rows)
        db.executemany("INSERT INTO g_user_password (gu_id, guw_password) VALUES (?, ?)",
                       [(first + i, hashes[i]) for i in range(args.users)])
        db.executemany("INSERT INTO g_user_scope_user (gu_id, gus_id) VALUES (?, ?)",
                       [(first + i, gus_id) for i in range(args.users) for gus_id in user_scope_ids])
    db.close()
    log(f"{args.users} users, 2 clients and the oidc plugin written in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
