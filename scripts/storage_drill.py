#!/usr/bin/env python3
"""Storage fault drill for Gatehouse (called by scripts/storage-drill; Python 3 standard library only).

Each part runs one `gatehouse serve`, keeps a load of sign-ups, logins and refreshes going while the
storage fails and comes back, and checks what a client and an operator see:

  S1  full disk: the SQLite file on a small tmpfs, filled to the last byte;
  S2  read-only: a node restarted on that tmpfs remounted read-only refuses to start, saying why (Linux
      will not remount a file system read-only under a process that has files open for writing), and
      starts again with nothing lost once it is read-write;
  S3  PostgreSQL stopped, then started again (the same data directory), the node never restarted;
  S4  a PostgreSQL primary killed (`-m immediate`, a crash) and its synchronous streaming standby
      promoted, the node reaching the database through one address switched to the new primary (what
      a virtual IP, a DNS name or HAProxy does), the node never restarted.

While the storage fails (S1, S3) every answer is a 2xx or a 503 with `Retry-After` (a problem document with
`temporarily_unavailable` on /v1, the OAuth error `temporarily_unavailable` on /oauth/token), never
another 5xx; /health/ready answers 503; the log says `storage unavailable` once for the episode,
naming the storage's code, and never `rollback failed` or `unexpected error`. When the storage comes
back the node answers again without a restart and logs `storage recovered`. Afterwards, after a restart
too, every sign-up that was acknowledged (201) logs in and every refresh token a 200 handed out last
still refreshes: nothing acknowledged is lost.

With synchronous replication (`synchronous_standby_names`) a commit is acknowledged only once the
standby has it, so a failover loses nothing acknowledged; with asynchronous replication the last
commits before the crash can be lost, whatever the application does (docs/operations.md).

S1 and S2 mount a tmpfs, which needs root (CI runs as root); without it they are skipped, saying so.
"""
import argparse
import os
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drill as d  # noqa: E402  (the shared HTTP and process helpers)
from tcp_switch import TCPSwitch  # noqa: E402

PG_PORT = 54333
FAILOVER_PORTS = (54336, 54337)   # S4: primary, standby
PG_BIN = "/usr/lib/postgresql/15/bin"


class Load:
    """Sign-ups, logins and refreshes from a few threads until stopped; every answer recorded."""

    def __init__(self, node, tag, users):
        self.node, self.tag, self.users = node, tag, users
        self.answers = []          # (kind, status, body, retry_after)
        self.acknowledged = []     # emails whose sign-up answered 201
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.threads = []
        self.counter = 0
        self.last_tokens = {}      # worker -> the last refresh token a 200 handed it

    def record(self, kind, status, body, retry_after=None):
        with self.lock:
            self.answers.append((kind, status, body, retry_after))

    def worker(self, w):
        refresh_token = self.users[w % len(self.users)][1]
        while not self.stop_event.is_set():
            with self.lock:
                self.counter += 1
                n = self.counter
            email = f"{self.tag}-{n}@example.com"
            status, body, retry = call(self.node, "POST", "/v1/signup",
                                       {"client_id": d.CLIENT, "email": email, "password": "storage fault passphrase 1"})
            self.record("signup", status, body, retry)
            if status == 201:
                with self.lock:
                    self.acknowledged.append(email)
            user = self.users[n % len(self.users)]
            status, body, retry = call(self.node, "POST", "/v1/login",
                                       {"client_id": d.CLIENT, "email": user[0], "password": "storage fault passphrase 1"})
            self.record("login", status, body, retry)
            status, body, retry = call(self.node, "POST", "/oauth/token", form={
                "grant_type": "refresh_token", "client_id": d.CLIENT, "refresh_token": refresh_token})
            self.record("refresh", status, body, retry)
            if status == 200 and isinstance(body, dict) and body.get("refresh_token"):
                refresh_token = body["refresh_token"]
                with self.lock:
                    self.last_tokens[w] = refresh_token
            time.sleep(0.02)

    def start(self, workers=4):
        for w in range(workers):
            thread = threading.Thread(target=self.worker, args=(w,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def stop(self):
        self.stop_event.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def since(self, index):
        with self.lock:
            return self.answers[index:]

    def mark(self):
        with self.lock:
            return len(self.answers)


def call(node, method, path, json_body=None, form=None, token=None, timeout=40):
    """drill.call on `node`, with the answer's Retry-After."""
    headers = {}
    status, body = d.call(method, node.url + path, json_body, form, token, timeout, answer_headers=headers)
    return status, body, headers.get("Retry-After")


def seed_users(node, tag, count=8):
    users = []
    for i in range(count):
        email = f"{tag}-seed-{i}@example.com"
        status, body = d.signup(node, email, "storage fault passphrase 1")
        if status != 201:
            raise RuntimeError(f"seed sign-up answered {status}: {body}")
        users.append((email, body["refresh_token"]))
    return users


def judge_outage(part, answers, expect_code_prefix, log_text, ready_status):
    """The answers while the storage failed, and the log of the episode."""
    statuses = [a[1] for a in answers]
    d.figure("answers while failing", d.histogram(statuses))
    bad = [a for a in answers if a[1] is None or (a[1] >= 500 and a[1] != 503)]
    unavailable = [a for a in answers if a[1] == 503]
    malformed = []
    for kind, status, body, retry in unavailable:
        code = body.get("error") if kind == "refresh" else body.get("code") if isinstance(body, dict) else None
        if not isinstance(body, dict) or code != "temporarily_unavailable" or not retry:
            malformed.append((kind, body, retry))
    episodes = log_text.count("storage unavailable")
    d.figure("log lines 'storage unavailable'", episodes)
    d.figure("/health/ready while failing", ready_status)
    problems = []
    if bad:
        problems.append(f"{len(bad)} answers neither 2xx/4xx nor 503, e.g. {bad[0][:3]}")
    if not unavailable:
        problems.append("no request was answered 503: the fault did not reach the server")
    if malformed:
        problems.append(f"{len(malformed)} 503s without temporarily_unavailable and Retry-After, e.g. {malformed[0]}")
    if episodes != 1:
        problems.append(f"'storage unavailable' logged {episodes} times, not once")
    if expect_code_prefix not in log_text:
        problems.append(f"the log does not name {expect_code_prefix}")
    for phrase in ("rollback failed", "unexpected error"):
        if phrase in log_text:
            problems.append(f"the log says '{phrase}'")
    if ready_status != 503:
        problems.append(f"/health/ready answered {ready_status}")
    return problems


def recovered(node, tag, deadline=40):
    """Sign-ups succeed again and readiness is back, without a restart; returns (seconds, problem)."""
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        status, _ = d.signup(node, f"{tag}-after-{time.monotonic_ns()}@example.com", "storage fault passphrase 1")
        ready, _ = d.call("GET", node.url + "/health/ready", timeout=10)
        if status == 201 and ready == 200:
            return time.monotonic() - started, None
        time.sleep(0.5)
    return None, "the node did not recover within 40 s"


def nothing_lost(node, emails):
    lost = []
    for email in emails:
        status, _ = d.login(node, email, "storage fault passphrase 1")
        if status != 200:
            lost.append((email, status))
    return lost


def log_since(node, offset):
    with open(node.log_path, errors="replace") as f:
        f.seek(offset)
        return f.read()


def log_size(node):
    return os.path.getsize(node.log_path) if os.path.exists(node.log_path) else 0


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", path], check=True)
    d.CLEANUPS.append(lambda: subprocess.run(["umount", "-l", path], check=False))


def fill(path):
    """Writes a filler file until the file system is full; returns its path."""
    filler = os.path.join(path, "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def sqlite_node(binary, keep, name):
    work = d.make_work(f"gatehouse-storage-{name}-", keep)
    disk = os.path.join(work, "disk")
    mount_tmpfs(disk, "24m")
    env = d.base_env(work, f"sqlite://{os.path.join(disk, 'gatehouse.db')}")
    env.update(GATEHOUSE_WORK=work, GATEHOUSE_LOG_LEVEL="notice", GATEHOUSE_CLEANUP_INTERVAL="0")
    d.setup_database(binary, env)
    node = d.Node(name, binary, env, d.free_port())
    node.start()
    return node, disk


def outage(part, node, tag, break_storage, repair_storage, expect_code):
    users = seed_users(node, tag)
    load = Load(node, tag, users)
    load.start()
    time.sleep(1.0)
    offset, mark = log_size(node), load.mark()
    break_storage()
    time.sleep(4.0)
    ready, _ = d.call("GET", node.url + "/health/ready", timeout=30)
    time.sleep(1.0)
    failing = load.since(mark)
    outage_log = log_since(node, offset)
    problems = judge_outage(part, failing, expect_code, outage_log, ready)
    repair_storage()
    seconds, problem = recovered(node, tag)
    load.stop()
    if problem:
        problems.append(problem)
    else:
        d.figure("recovered after repair (s)", f"{seconds:.1f}")
    if "storage recovered" not in log_since(node, offset):
        problems.append("the log does not say 'storage recovered'")
    node.stop()
    node.start()
    acknowledged = [u[0] for u in users] + load.acknowledged
    lost = nothing_lost(node, acknowledged)
    d.figure("acknowledged sign-ups", len(acknowledged))
    d.figure("acknowledged sign-ups lost (after a restart)", len(lost))
    if lost:
        problems.append(f"{len(lost)} acknowledged sign-ups cannot log in, e.g. {lost[0]}")
    # The last refresh token each worker was handed (its predecessor's rotation acknowledged) still
    # refreshes after the restart.
    stale = [w for w, token in load.last_tokens.items() if d.refresh(node, token)[0] != 200]
    d.figure("acknowledged refresh rotations lost", f"{len(stale)} of {len(load.last_tokens)}")
    if stale:
        problems.append(f"{len(stale)} workers' last acknowledged refresh token no longer refreshes")
    if problems:
        d.show_logs(node)
    d.verdict(part, not problems, "; ".join(problems))


def part_full_disk(binary, keep):
    d.log("S1  full disk (SQLite on a 24 MiB tmpfs, filled)")
    node, disk = sqlite_node(binary, keep, "full")
    filler = []
    outage("S1", node, "full", lambda: filler.append(fill(disk)), lambda: os.remove(filler[0]), "sqlite_full")


def part_read_only(binary, keep):
    """A running SQLite node keeps its files open for writing, so Linux refuses to remount their file
    system read-only under it: the fault a node meets is a read-only file system at its (re)start."""
    d.log("S2  read-only (a SQLite node restarted on its tmpfs remounted read-only, then read-write)")
    node, disk = sqlite_node(binary, keep, "ro")
    users = seed_users(node, "ro")
    problems = []
    node.stop()
    subprocess.run(["mount", "-o", "remount,ro", disk], check=True)
    offset = log_size(node)
    try:
        node.start(timeout=20)
        problems.append("the node started on a read-only database")
    except RuntimeError:
        pass
    text = log_since(node, offset)
    said = next((line for line in text.splitlines() if "cannot open the database" in line), None)
    d.figure("start on a read-only file system", "refused" if said else "not refused clearly")
    if said:
        d.figure("its message", said[:120] + ("…" if len(said) > 120 else ""))
    else:
        problems.append("no 'cannot open the database' line at the refused start")
    if "Program crashed" in text or "Fatal error" in text:
        problems.append("the refused start crashed instead of exiting with the message")
    subprocess.run(["mount", "-o", "remount,rw", disk], check=True)
    node.start()
    lost = nothing_lost(node, [u[0] for u in users])
    d.figure("acknowledged sign-ups lost", len(lost))
    if lost:
        problems.append(f"{len(lost)} acknowledged sign-ups cannot log in")
    if problems:
        d.show_logs(node)
    d.verdict("S2", not problems, "; ".join(problems))


def pg_ctl(directory, *arguments):
    subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", os.path.join(directory, "data"), *arguments],
                   check=True, capture_output=True)


def part_postgres(binary, keep):
    d.log(f"S3  PostgreSQL stopped and started again (127.0.0.1:{PG_PORT}), the node left running")
    pgdir = os.path.join("/tmp", f"gatehouse-storage-pg-{os.getpid()}")
    url = subprocess.run([os.path.join(d.ROOT, "scripts", "postgres.sh"), "start", pgdir, str(PG_PORT)],
                         check=True, capture_output=True, text=True).stdout.strip()
    d.CLEANUPS.append(lambda: subprocess.run([os.path.join(d.ROOT, "scripts", "postgres.sh"), "stop", pgdir], check=False))
    work = d.make_work("gatehouse-storage-pg-", keep)
    env = d.base_env(work, url)
    env.update(GATEHOUSE_WORK=work, GATEHOUSE_LOG_LEVEL="notice", GATEHOUSE_CLEANUP_INTERVAL="0")
    d.setup_database(binary, env)
    node = d.Node("pg", binary, env, d.free_port())
    node.start()
    options = f"-h 127.0.0.1 -p {PG_PORT} -k {pgdir} -c fsync=on -c max_connections=200"
    outage("S3", node, "pg", lambda: pg_ctl(pgdir, "-m", "fast", "-w", "stop"),
           lambda: pg_ctl(pgdir, "-l", os.path.join(pgdir, "server.log"), "-w", "-o", options, "start"), "postgres_")


def psql(port, sql):
    return "\n".join(d.psql(f"postgres://postgres@127.0.0.1:{port}/postgres", sql))


def wait_for(what, check, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not within {seconds} s")


def part_failover(binary, keep):
    primary_port, standby_port = FAILOVER_PORTS
    d.log(f"S4  PostgreSQL primary (:{primary_port}) killed, its synchronous standby (:{standby_port}) promoted, the node left running")
    script = os.path.join(d.ROOT, "scripts", "postgres.sh")
    base = os.path.join("/tmp", f"gatehouse-failover-{os.getpid()}")
    primary, standby = base + "-primary", base + "-standby"
    subprocess.run([script, "start", primary, str(primary_port)], check=True, capture_output=True, text=True)
    d.CLEANUPS.append(lambda: subprocess.run([script, "stop", primary], check=False))
    d.CLEANUPS.append(lambda: subprocess.run([script, "stop", standby], check=False))
    os.makedirs(standby)
    shutil.chown(standby, "postgres")
    subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_basebackup", "-h", "127.0.0.1", "-p", str(primary_port),
                    "-U", "postgres", "-D", os.path.join(standby, "data"), "-R", "-X", "stream", "-c", "fast"],
                   check=True, capture_output=True)
    pg_ctl(standby, "-l", os.path.join(standby, "server.log"), "-w", "-o",
           f"-h 127.0.0.1 -p {standby_port} -k {standby} -c fsync=on -c max_connections=200", "start")
    wait_for("the standby streaming", lambda: psql(primary_port, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") == "1")
    # Set after the base backup, so the promoted standby does not wait for a standby of its own.
    psql(primary_port, "ALTER SYSTEM SET synchronous_standby_names = '*'")
    psql(primary_port, "SELECT pg_reload_conf()")
    wait_for("the standby synchronous", lambda: psql(primary_port, "SELECT sync_state FROM pg_stat_replication") == "sync")
    address = TCPSwitch(primary_port)
    d.CLEANUPS.append(address.close)
    work = d.make_work("gatehouse-storage-failover-", keep)
    env = d.base_env(work, f"postgres://postgres@127.0.0.1:{address.port}/postgres")
    env.update(GATEHOUSE_WORK=work, GATEHOUSE_LOG_LEVEL="notice", GATEHOUSE_CLEANUP_INTERVAL="0")
    d.setup_database(binary, env)
    node = d.Node("failover", binary, env, d.free_port())
    node.start()

    def promote():
        started = time.monotonic()
        pg_ctl(standby, "-w", "promote")
        address.switch(standby_port)
        d.figure("promotion and switch (s)", f"{time.monotonic() - started:.1f}")

    outage("S4", node, "failover", lambda: pg_ctl(primary, "-m", "immediate", "-w", "stop"), promote, "postgres_")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(d.ROOT, ".build", "debug", "gatehouse"))
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--only", choices=["full", "ro", "postgres", "failover"])
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    try:
        root = os.geteuid() == 0
        if args.only in (None, "full"):
            part_full_disk(binary, args.keep) if root else d.log("S1  skipped: mounting a tmpfs needs root")
        if args.only in (None, "ro"):
            part_read_only(binary, args.keep) if root else d.log("S2  skipped: mounting a tmpfs needs root")
        if args.only in (None, "postgres"):
            part_postgres(binary, args.keep)
        if args.only in (None, "failover"):
            part_failover(binary, args.keep)
    finally:
        d.cleanup()
    return d.outcome("storage drill")


if __name__ == "__main__":
    sys.exit(main())
