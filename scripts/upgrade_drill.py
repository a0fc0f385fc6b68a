#!/usr/bin/env python3
"""Rolling upgrade drill for Gatehouse (called by scripts/upgrade-drill).

Two nodes of the previous release (a binary built from the commit pinned in scripts/upgrade-drill)
serve one PostgreSQL (scripts/postgres.sh on 127.0.0.1:54338) under a steady load of sign-ups,
logins, refreshes and /v1/me spread over both (a request refused by a restarting node is retried on
the other, as a load balancer would). Then, as docs/operations.md says:

  check    `gatehouse migrate --check` of this release: what is pending and that it may run now
  replace  node A stopped and started as this release (it applies the pending expand migrations at
           start, while B of the previous release keeps serving on the newer schema), then node B

Then: no 5xx at any time and every request answered by a node; every acknowledged sign-up logs in;
every refresh token handed out last still refreshes, and the seed users' tokens from before the
upgrade too; `migrate --check` afterwards finds nothing pending and both nodes reporting this
schema. Figures: how long no node was ready (nodes of the previous release call a newer schema not
ready; this release's stay ready while newer migrations only add, which the last part checks by
recording a newer additive migration, then one that removes, as a newer release would).
"""
import argparse
import os
import random
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drill as d  # noqa: E402  (the shared HTTP and process helpers)

PG_PORT = 54338
PASSWORD = "correct horse battery staple"


class ReadyWatch:
    """Polls both nodes' /health/ready every 0.2 s; how long neither was ready."""

    def __init__(self, nodes):
        self.nodes, self.stopping, self.gaps = nodes, threading.Event(), 0.0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        last = time.monotonic()
        while not self.stopping.is_set():
            ready = any(d.call("GET", n.url + "/health/ready", timeout=2)[0] == 200 for n in self.nodes)
            now = time.monotonic()
            if not ready:
                self.gaps += now - last
            last = now
            time.sleep(0.2)

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=10)




def replace(node, binary):
    node.stop()
    node.binary = binary
    return node.start()


def run(old, new, keep):
    d.log(f"Rolling upgrade: the previous release and this one on one PostgreSQL under load")
    database_url = d.own_postgres(PG_PORT, "gatehouse-upgrade-pg.", "U setup")
    if database_url is None:
        return
    work = d.make_work("gatehouse-upgrade-drill.", keep)
    env = d.base_env(work, database_url)
    env.update(GATEHOUSE_WORK=work, GATEHOUSE_PUBLIC_URL="http://gatehouse-upgrade-drill.test")
    d.setup_database(old, env)
    before = int(d.psql(database_url, "SELECT max(version) FROM schema_migrations")[0])
    d.figure("schema of the previous release", before)
    a, b = d.Node("A", old, env, d.free_port()), d.Node("B", old, env, d.free_port())
    for node in (a, b):
        node.start()
    seeds = []
    for i in range(8):
        status, body = d.signup(random.choice((a, b)), f"seed-{i}@upgrade-drill.example.com", PASSWORD)
        if status != 201:
            raise RuntimeError(f"seed sign-up answered {status}: {body}")
        seeds.append((f"seed-{i}@upgrade-drill.example.com", body["refresh_token"], body["access_token"]))

    load, watch = d.SpreadLoad([a, b], "upgrade-drill", PASSWORD), ReadyWatch([a, b])
    load.start()
    watch.start()
    time.sleep(2)
    check = subprocess.run([new, "migrate", "--check"], env=env, cwd=work, capture_output=True, text=True)
    for line in check.stdout.strip().splitlines():
        d.log(f"    | {line}")
    d.verdict("U1 migrate --check: the pending migrations only add and may run now", check.returncode == 0
              and "can apply them now" in check.stdout and "(contract)" not in check.stdout and "(breaking)" not in check.stdout,
              check.stderr.strip()[-300:])
    for node in (a, b):
        d.figure(f"node {node.name} replaced, ready after (s)", f"{replace(node, new):.2f}")
        time.sleep(2)
    load.stop()
    watch.stop()

    after = int(d.psql(database_url, "SELECT max(version) FROM schema_migrations")[0])
    d.figure("schema after", after)
    fives = [s for s in load.statuses if d.is_5xx(s)]
    d.figure("load answers", d.histogram(load.statuses))
    d.figure("requests neither node answered", load.unserved)
    d.figure("time no node was ready (s)", f"{watch.gaps:.1f}")
    d.verdict("U2 no 5xx and every request answered while both releases served", after > before and not fives
              and load.unserved == 0, f"{len(fives)} 5xx, {load.unserved} unanswered, schema {before} -> {after}")

    lost = [e for e in load.acknowledged if d.login(random.choice((a, b)), e, PASSWORD)[0] != 200]
    stale = [e for e, t in load.last_refresh.items() if d.refresh(random.choice((a, b)), t)[0] != 200]
    seeded = [e for e, r, t in seeds if d.refresh(random.choice((a, b)), r)[0] != 200 or d.me(a, t)[0] != 200]
    d.figure("acknowledged sign-ups", len(load.acknowledged))
    d.figure("last refresh tokens tried", len(load.last_refresh))
    d.verdict("U3 nothing acknowledged lost: sign-ups log in, last refresh tokens and the seeds' tokens work",
              not lost and not stale and not seeded, f"{len(lost)} sign-ups, {len(stale)} refresh tokens, {len(seeded)} seeds")

    time.sleep(1)
    final = subprocess.run([new, "migrate", "--check"], env=env, cwd=work, capture_output=True, text=True)
    d.verdict("U4 afterwards nothing pending, both nodes seen at this schema", final.returncode == 0
              and "pending: none" in final.stdout and f"2 at schema {after}" in final.stdout, final.stdout.strip()[-300:])

    # A newer release's migrations, recorded as it would: one that only adds keeps this release's
    # nodes ready; one that removes what they use makes them not ready (and refuse to start).
    now = int(time.time() * 1000)
    d.psql(database_url, f"INSERT INTO schema_migrations (version, name, applied_at) VALUES ({after + 1}, 'drill: adds', {now})")
    adds = [d.call("GET", n.url + "/health/ready")[0] for n in (a, b)]
    d.psql(database_url, f"INSERT INTO schema_migrations (version, name, applied_at, min_node_version) "
                       f"VALUES ({after + 2}, 'drill: removes', {now}, {after + 2})")
    removes = [d.call("GET", n.url + "/health/ready")[0] for n in (a, b)]
    d.psql(database_url, f"DELETE FROM schema_migrations WHERE version > {after}")
    d.verdict("U5 this release stays ready on a newer schema that only adds, not on one that removes",
              adds == [200, 200] and removes == [503, 503], f"adds: {adds}, removes: {removes}")
    for node in (a, b):
        node.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True, help="the previous release's gatehouse binary")
    parser.add_argument("--new", default=os.path.join(d.ROOT, ".build", "debug", "gatehouse"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    try:
        run(os.path.abspath(args.old), os.path.abspath(args.new), args.keep)
    except Exception as error:
        d.verdict("U setup", False, f"{type(error).__name__}: {error}")
    finally:
        d.cleanup()
    return d.outcome("upgrade drill")


if __name__ == "__main__":
    sys.exit(main())
