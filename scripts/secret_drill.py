#!/usr/bin/env python3
"""Server secret rotation drill for Gatehouse (called by scripts/secret-drill).

Two `gatehouse serve` nodes on one PostgreSQL (scripts/postgres.sh on 127.0.0.1:54335), each with its
own secret file, under a steady load of sign-ups, logins, refreshes and /v1/me spread over both (a
request refused by a restarting node is retried on the other, as a load balancer would). The secret
is rotated as docs/operations.md says:

  stage    every node's file gets the new secret after the old one; nodes restarted one by one
  promote  the new secret first, the old one after it; nodes restarted one by one
  rotate   `gatehouse secret rotate` reseals everything at rest while both nodes serve
  retire   the old secret removed from every file; nodes restarted one by one

Then: no 5xx at any time; every acknowledged sign-up logs in; every refresh token handed out last
still refreshes; an access token signed before the rotation still opens /v1/me; an authenticator app
enrolled before still signs in (pyotp codes), and so does one of its recovery codes; a recovery mail
queued before is delivered after; `gatehouse secret status` finds nothing under the old secret; every
sealed value in the database opens with the new secret and none with the old one (checked here with
HKDF and AES-GCM from Python's `cryptography`, not with Gatehouse's code); and a node started with only
the old secret refuses to start, naming the secret it lacks.
"""
import argparse
import base64
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drill as d  # noqa: E402  (the shared HTTP and process helpers)

PG_PORT = 54335
PASSWORD = "correct horse battery staple"




def sealed_values(database_url):
    """Every sealed value at rest, read with psql: (place, base64 value)."""
    values = [("signing key", v) for v in d.psql(database_url, "SELECT sealed_private_key FROM signing_keys")]
    values += [("outbox", v) for v in d.psql(database_url, "SELECT payload FROM outbox WHERE payload <> ''")]
    for config in d.psql(database_url, "SELECT config FROM credentials WHERE type = 'totp'"):
        values.append(("authenticator app", json.loads(config)["sealed_secret"]))
    for row in d.psql(database_url, "SELECT value FROM cluster_settings WHERE name = 'stable_keys'"):
        values.append(("stable keys", json.loads(row)["sealed"]))
    return values


def opens(secret_line, sealed):
    """Whether `sealed` (base64 of nonce, ciphertext, tag) opens under the secret: the sealing key is
    HKDF-SHA256 of the secret with salt "gatehouse" and info "seal:v1", the cipher AES-256-GCM."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"gatehouse", info=b"seal:v1").derive(base64.b64decode(secret_line))
    combined = base64.b64decode(sealed)
    try:
        AESGCM(key).decrypt(combined[:12], combined[12:], None)
        return True
    except Exception:
        return False


def totp_code(secret, not_this=None):
    import pyotp
    while True:
        code = pyotp.TOTP(secret).now()
        if code != not_this:
            return code
        time.sleep(1)


def write_secrets(nodes, lines):
    for node in nodes:
        with open(node.env["GATEHOUSE_SECRET_FILE"], "w") as f:
            f.write("\n".join(lines) + "\n")


def rolling_restart(nodes):
    for node in nodes:
        node.stop()
        node.start()


def run(binary, keep):
    d.log("Secret rotation: two nodes on one PostgreSQL under load")
    database_url = d.own_postgres(PG_PORT, "gatehouse-secret-pg.", "R setup")
    if database_url is None:
        return
    work = d.make_work("gatehouse-secret-drill.", keep)
    env = d.base_env(work, database_url)
    env.pop("GATEHOUSE_DEV_OUTBOX")       # no mail transport: mail waits in the outbox, sealed
    env.update(GATEHOUSE_WORK=work, GATEHOUSE_PUBLIC_URL="http://gatehouse-secret-drill.test")
    old = d.cli(binary, env, "secret", "generate").strip()
    new = d.cli(binary, env, "secret", "generate").strip()
    nodes = []
    for name in ("A", "B"):
        node = d.Node(name, binary, dict(env, GATEHOUSE_SECRET_FILE=os.path.join(work, f"secret-{name}")), d.free_port())
        nodes.append(node)
    write_secrets(nodes, [old])
    d.setup_database(binary, nodes[0].env)
    for node in nodes:
        node.start()
    a, b = nodes

    # What must survive: a user with an authenticator app and recovery codes, an access token, and a
    # recovery mail waiting in the outbox.
    email = "ada@secret-drill.example.com"
    status, body = d.signup(a, email, PASSWORD)
    assert status == 201, (status, body)
    access = body["access_token"]
    status, enrolled = d.call("POST", a.url + "/v1/me/factors/totp", token=access)
    assert status == 201, (status, enrolled)
    first_code = totp_code(enrolled["secret"])
    status, confirmed = d.call("POST", b.url + f"/v1/me/factors/{enrolled['id']}/confirm", {"code": first_code}, token=access)
    assert status == 200, (status, confirmed)
    status, _ = d.call("POST", a.url + "/v1/recovery", {"client_id": d.CLIENT, "email": email})
    assert status == 202, status
    queued = int(d.psql(database_url, "SELECT count(*) FROM outbox WHERE payload <> ''")[0])

    load = d.SpreadLoad(nodes, "secret-drill", PASSWORD)
    load.start()
    time.sleep(2)
    phases = [("stage", [old, new]), ("promote", [new, old])]
    for name, lines in phases:
        write_secrets(nodes, lines)
        started = time.monotonic()
        rolling_restart(nodes)
        d.figure(f"{name}: rolling restart (s)", f"{time.monotonic() - started:.1f}")
        time.sleep(1)
    started = time.monotonic()
    rotated = subprocess.run([binary, "secret", "rotate", "--batch", "50"], env=a.env, cwd=work, capture_output=True, text=True)
    d.figure("secret rotate (s)", f"{time.monotonic() - started:.1f}")
    for line in rotated.stdout.strip().splitlines():
        d.log(f"    | {line}")
    d.verdict("R1 gatehouse secret rotate under load", rotated.returncode == 0, rotated.stderr.strip()[-400:])
    time.sleep(1)
    write_secrets(nodes, [new])
    rolling_restart(nodes)
    time.sleep(2)
    load.stop()

    fives = [s for s in load.statuses if d.is_5xx(s)]
    d.figure("load answers", d.histogram(load.statuses))
    d.figure("requests neither node answered", load.unserved)
    d.verdict("R2 no 5xx and every request answered by a node", not fives and load.unserved == 0,
              f"{len(fives)} 5xx, {load.unserved} unanswered")

    lost = [e for e in load.acknowledged if d.login(random.choice(nodes), e, PASSWORD)[0] != 200]
    d.figure("acknowledged sign-ups", len(load.acknowledged))
    stale = [e for e, t in load.last_refresh.items() if d.refresh(random.choice(nodes), t)[0] != 200]
    d.figure("last refresh tokens tried", len(load.last_refresh))
    d.verdict("R3 every acknowledged sign-up logs in, every last refresh token refreshes", not lost and not stale,
              f"{len(lost)} sign-ups lost, {len(stale)} refresh tokens refused")

    me_status, _ = d.me(b, access)
    status, login = d.login(a, email, PASSWORD)
    flow = login.get("flow_id", "") if isinstance(login, dict) else ""
    totp_status, _ = d.call("POST", b.url + "/v1/mfa/verify",
                            {"flow_id": flow, "factor": "totp", "code": totp_code(enrolled["secret"], not_this=first_code)})
    status, login = d.login(b, email, PASSWORD)
    flow = login.get("flow_id", "") if isinstance(login, dict) else ""
    recovery_status, _ = d.call("POST", a.url + "/v1/mfa/verify",
                                {"flow_id": flow, "factor": "recovery_code", "code": confirmed["recovery_codes"][0]})
    d.verdict("R4 a token, an authenticator app and a recovery code from before the rotation still work",
              me_status == 200 and totp_status == 200 and recovery_status == 200,
              f"/v1/me {me_status}, totp {totp_status}, recovery code {recovery_status}")

    status_out = subprocess.run([binary, "secret", "status"], env=a.env, cwd=work, capture_output=True, text=True)
    clean = status_out.returncode == 0 and "under a previous one, 0 under none" in status_out.stdout \
        and all(" 0 under a previous one" in line for line in status_out.stdout.splitlines()[1:])
    values = sealed_values(database_url)
    under_new = sum(1 for _, v in values if opens(new, v))
    under_old = sum(1 for _, v in values if opens(old, v))
    d.figure("sealed values at rest", len(values))
    d.figure("opened by the new secret / by the old one", f"{under_new} / {under_old}")
    d.verdict("R5 everything at rest under the new secret, nothing under the old one",
              bool(clean and values and under_new == len(values) and under_old == 0),
              f"status rc {status_out.returncode}: {status_out.stdout.strip()[-300:]}")

    stranger = d.Node("C", binary, dict(a.env, GATEHOUSE_SECRET_FILE=os.path.join(work, "secret-C")), d.free_port())
    write_secrets([stranger], [old])
    try:
        stranger.start(timeout=30)
        refused, why = False, "a node with only the old secret started"
    except RuntimeError as error:
        text = str(error)
        refused = "do not open with this server secret" in text and "exited with" in text
        why = text[-400:]
    d.verdict("R6 a node holding only the old secret refuses to start and says what to do", refused, why)

    # The recovery mail queued under the old secret goes out after it is gone.
    a.stop()
    a.env["GATEHOUSE_DEV_OUTBOX"] = "1"
    a.start()
    outbox, delivered = os.path.join(work, "outbox"), False
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not delivered:
        for name in (os.listdir(outbox) if os.path.isdir(outbox) else []):
            with open(os.path.join(outbox, name), errors="replace") as f:
                delivered = delivered or email in f.read()
        time.sleep(0.5)
    d.verdict("R7 mail queued before the rotation is delivered after it", queued >= 1 and delivered,
              f"{queued} queued, delivered: {delivered}")
    for node in nodes:
        node.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(d.ROOT, ".build", "debug", "gatehouse"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    try:
        run(os.path.abspath(args.binary), args.keep)
    except Exception as error:
        d.verdict("R setup", False, f"{type(error).__name__}: {error}")
    finally:
        d.cleanup()
    return d.outcome("secret drill")


if __name__ == "__main__":
    sys.exit(main())
