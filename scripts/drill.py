#!/usr/bin/env python3
"""Fault drill for Gatehouse (called by scripts/drill; Python 3 standard library only).

Part 1, two `gatehouse serve` nodes on one PostgreSQL (scripts/postgres.sh on 127.0.0.1:54331), one
shared secret file and one shared GATEHOUSE_PUBLIC_URL:
  1a  sign up on A, log in on B, B's access token accepted by A on GET /v1/me (and A's by B);
  1b  50 concurrent refreshes of one refresh token split over both nodes: one distinct successor
      (the documented grace answer: every retry within GATEHOUSE_REFRESH_GRACE gets the same
      successor), and the session lives on (the successor refreshes, its access token works);
  1c  wrong passwords for one account from one address, concurrently, alternating nodes: exactly
      GATEHOUSE_MAX_FAILURES_PER_ACCOUNT are checked (401), the rest refused (429);
  1d  a sign-up burst over both nodes, node A killed -9 mid-way: every acknowledged (2xx) sign-up
      can log in afterwards, node B answered no 5xx and dropped no connection, A restarts.
Part 2, one node on a SQLite file: concurrent sign-ups and refresh chains, kill -9 mid-load, restart
on the same file: every acknowledged sign-up logs in, and for every user the last refresh token
acknowledged to the client refreshes (and so does its successor).

Passwords are hashed at a cheap Argon2id cost (1 MiB, 1 pass) so the drill measures faults, not
hashing. Every process and temporary directory is removed on exit (--keep keeps the directories).
"""
import argparse
import collections
import concurrent.futures
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG_PORT = 54331            # never 54329: someone else uses it
FAILURE_LIMIT = 10         # GATEHOUSE_MAX_FAILURES_PER_ACCOUNT for part 1c
CLIENT = "drill"
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))   # never through an http_proxy

PROCESSES = []             # every Node started, stopped on exit
CLEANUPS = []              # callables run on exit, last first
RESULTS = []               # (part, passed)


def log(message=""):
    print(message, flush=True)


def figure(name, value):
    log(f"    {name:<50} {value}")


def verdict(part, passed, why=""):
    RESULTS.append((part, passed))
    log(f"  {part}: {'PASS' if passed else 'FAIL'}{'' if passed or not why else '  (' + why + ')'}")


# --- HTTP -------------------------------------------------------------------------------------------

def call(method, url, json_body=None, form=None, token=None, timeout=30, answer_headers=None):
    """Returns (status, body). status is None on a transport error (refused, reset, timeout), and body
    then names the error. `answer_headers`, a dict, receives the answer's headers."""
    headers, data = {}, None
    if json_body is not None:
        data, headers["Content-Type"] = json.dumps(json_body).encode(), "application/json"
    elif form is not None:
        data, headers["Content-Type"] = urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with OPENER.open(request, timeout=timeout) as response:
            if answer_headers is not None:
                answer_headers.update(response.headers.items())
            return response.status, parse(response.read())
    except urllib.error.HTTPError as error:
        if answer_headers is not None:
            answer_headers.update(error.headers.items())
        return error.code, parse(error.read())
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, socket.timeout,
            OSError) as error:
        return None, f"{type(error).__name__}: {getattr(error, 'reason', error)}"


def parse(raw):
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")[:200]


def signup(node, email, password):
    return call("POST", node.url + "/v1/signup", {"client_id": CLIENT, "email": email, "password": password})


def login(node, email, password):
    return call("POST", node.url + "/v1/login", {"client_id": CLIENT, "email": email, "password": password})


def refresh(node, token):
    return call("POST", node.url + "/oauth/token",
                form={"grant_type": "refresh_token", "client_id": CLIENT, "refresh_token": token})


def me(node, access):
    return call("GET", node.url + "/v1/me", token=access)


class SpreadLoad:
    """Workers that sign up, log in, refresh and read /v1/me on either of two nodes until stopped."""

    def __init__(self, nodes, tag, password):
        self.nodes, self.tag, self.password, self.stopping = nodes, tag, password, threading.Event()
        self.lock = threading.Lock()
        self.statuses, self.acknowledged, self.last_refresh, self.unserved = [], [], {}, 0

    def send(self, function, *arguments):
        """On a random node, then on the other when the first refused the connection (restarting)."""
        first = random.randrange(len(self.nodes))
        for node in (self.nodes[first], self.nodes[1 - first]):
            status, body = function(node, *arguments)
            if status is not None:
                with self.lock:
                    self.statuses.append(status)
                return status, body
        with self.lock:
            self.unserved += 1
        return None, body

    def worker(self, w):
        n = 0
        while not self.stopping.is_set():
            n += 1
            email = f"load-{w}-{n}@{self.tag}.example.com"
            status, body = self.send(signup, email, self.password)
            if status == 201:
                with self.lock:
                    self.acknowledged.append(email)
                token = body.get("refresh_token")
                for _ in range(3):
                    status, body = self.send(refresh, token)
                    if status != 200:
                        break
                    token = body["refresh_token"]
                    with self.lock:
                        self.last_refresh[email] = token
                    self.send(me, body["access_token"])
            self.send(login, email, self.password)

    def start(self, workers=4):
        self.threads = [threading.Thread(target=self.worker, args=(w,), daemon=True) for w in range(workers)]
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)


def histogram(statuses):
    counts = collections.Counter("conn-error" if s is None else str(s) for s in statuses)
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"


def is_5xx(status):
    return status is not None and status >= 500


def parallel(function, items, workers):
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items))


# --- processes ------------------------------------------------------------------------------------

def free_port():
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in (PG_PORT, 54329):
            return port


def port_in_use(port):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def base_env(work, database_url):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_")}
    env.update(
        GATEHOUSE_DATABASE_URL=database_url,
        GATEHOUSE_SECRET_FILE=os.path.join(work, "secret"),
        GATEHOUSE_OUTBOX_DIR=os.path.join(work, "outbox"),
        GATEHOUSE_DEV_OUTBOX="1",
        GATEHOUSE_LOG_LEVEL="warning",
        GATEHOUSE_ARGON2_MEMORY="1024",
        GATEHOUSE_ARGON2_ITERATIONS="1",
        GATEHOUSE_MAX_SIGNUPS_PER_IP="1000000",
        GATEHOUSE_IDENTIFIER_STATUS_PER_MINUTE="1000000",
        GATEHOUSE_OTP_SENDS_PER_HOUR="1000000",
        GATEHOUSE_RATE_LIMITS="*=1000000/60",
        GATEHOUSE_MAX_FAILURES_PER_ACCOUNT=str(FAILURE_LIMIT),
        GATEHOUSE_MAX_FAILURES_PER_IP="1000000",
    )
    return env


def cli(binary, env, *arguments):
    done = subprocess.run([binary, *arguments], env=env, cwd=env["GATEHOUSE_WORK"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"gatehouse {' '.join(arguments)} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    return done.stdout


def setup_database(binary, env):
    cli(binary, env, "migrate")
    created = json.loads(cli(binary, env, "clients", "create", "--name", "Drill", "--id", CLIENT,
                             "--set", "email_verification=off"))
    assert created.get("id", CLIENT) == CLIENT, created


class Node:
    def __init__(self, name, binary, env, port):
        self.name, self.binary, self.port = name, binary, port
        self.env = dict(env, GATEHOUSE_PORT=str(port))
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = os.path.join(env["GATEHOUSE_WORK"], f"node-{name}.log")
        self.process = None
        PROCESSES.append(self)

    def start(self, timeout=90):
        """Starts `gatehouse serve` and waits for GET /health/ready; returns the seconds it took."""
        started = time.monotonic()
        with open(self.log_path, "a") as out:
            out.write(f"--- start {time.strftime('%H:%M:%S')}\n")
            out.flush()
            self.process = subprocess.Popen([self.binary, "serve"], env=self.env, cwd=self.env["GATEHOUSE_WORK"],
                                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"node {self.name} exited with {self.process.returncode} before ready:\n{self.tail()}")
            status, _ = call("GET", self.url + "/health/ready", timeout=2)
            if status == 200:
                return time.monotonic() - started
            time.sleep(0.05)
        raise RuntimeError(f"node {self.name} not ready after {timeout} s:\n{self.tail()}")

    def kill9(self):
        """SIGKILL; returns the seconds until the process was reaped."""
        started = time.monotonic()
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        return time.monotonic() - started

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self, lines=12):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


def show_logs(*nodes):
    for node in nodes:
        text = node.tail()
        if text.strip():
            log(f"    --- last lines of node {node.name}'s log ---")
            for line in text.rstrip().splitlines():
                log(f"    | {line}")


def cleanup():
    for node in PROCESSES:
        try:
            node.stop()
        except Exception as error:                      # keep cleaning up
            log(f"cleanup: node {node.name}: {error}")
    while CLEANUPS:
        try:
            CLEANUPS.pop()()
        except Exception as error:
            log(f"cleanup: {error}")


def outcome(name):
    """Logs how many parts of drill `name` passed; the exit status: 0 only when every part ran and passed."""
    passed = sum(1 for _, ok in RESULTS if ok)
    log(f"{name}: {passed} of {len(RESULTS)} parts passed")
    return 0 if RESULTS and passed == len(RESULTS) else 1


def make_work(prefix, keep):
    work = tempfile.mkdtemp(prefix=prefix)
    if keep:
        CLEANUPS.append(lambda: log(f"kept {work}"))
    else:
        CLEANUPS.append(lambda: shutil.rmtree(work, ignore_errors=True))
    return work


PSQL = "/usr/lib/postgresql/15/bin/psql"


def psql(database_url, query):
    """Runs one statement with psql (the PostgreSQL 15 client next to the server postgres.sh runs);
    returns its output's lines."""
    done = subprocess.run([PSQL, database_url, "-XAtc", query], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"psql failed: {done.stderr.strip()}")
    return [line for line in done.stdout.splitlines() if line]


def psql_count(database_url, query):
    """One number from psql; None without psql."""
    if not os.access(PSQL, os.X_OK):
        return None
    return int(psql(database_url, query)[0])


def own_postgres(port, prefix, part):
    """A PostgreSQL of the drill's own on 127.0.0.1:`port` (stopped on exit); its admin URL, or None
    after a failed verdict for `part` when the port is taken or it does not start."""
    if port_in_use(port):
        verdict(part, False, f"port {port} is already in use; not touching it")
        return None
    # Its own directory under /tmp: postgres.sh hands it to the postgres user.
    pg_dir = tempfile.mkdtemp(prefix=prefix)
    script = os.path.join(ROOT, "scripts", "postgres.sh")
    CLEANUPS.append(lambda: subprocess.run([script, "stop", pg_dir], cwd=ROOT, capture_output=True))
    done = subprocess.run([script, "start", pg_dir, str(port)], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        verdict(part, False, f"postgres.sh start failed: {done.stderr.strip()[-500:]}")
        return None
    return done.stdout.strip()


# --- part 1: two nodes on one PostgreSQL -------------------------------------------------------------

def part_postgres(binary, keep):
    log("Part 1: two nodes on one PostgreSQL")
    started = time.monotonic()
    database_url = own_postgres(PG_PORT, "gatehouse-drill-pg.", "1 setup")
    if database_url is None:
        return
    figure("PostgreSQL start (s)", f"{time.monotonic() - started:.1f}")

    work = make_work("gatehouse-drill.", keep)
    env = base_env(work, database_url)
    env["GATEHOUSE_WORK"] = work
    port_a, port_b = free_port(), free_port()
    while port_b == port_a:
        port_b = free_port()
    # One issuer for the cluster: the address a load balancer would have.
    env["GATEHOUSE_PUBLIC_URL"] = "http://gatehouse-drill.test"
    setup_database(binary, env)
    a, b = Node("A", binary, env, port_a), Node("B", binary, env, port_b)
    a.database_url = b.database_url = database_url
    figure("node A ready (s)", f"{a.start():.2f}")
    figure("node B ready (s)", f"{b.start():.2f}")

    for name, part in [("1a cross-node tokens", part_1a), ("1b concurrent refresh", part_1b),
                       ("1c failure limit across nodes", part_1c), ("1d kill -9 during sign-ups", part_1d)]:
        log(f"  {name}")
        try:
            passed, why = part(a, b)
        except Exception as error:
            passed, why = False, f"{type(error).__name__}: {error}"
        verdict(name.split()[0], passed, why)
        if not passed:
            show_logs(a, b)
    a.stop()
    b.stop()


def part_1a(a, b):
    email, password = "ada@drill.example.com", "correct horse battery staple"
    s_status, s_body = signup(a, email, password)
    figure("sign-up on A", s_status)
    l_status, l_body = login(b, email, password)
    figure("login on B", l_status)
    if s_status != 201 or l_status != 200:
        return False, f"sign-up {s_status} {s_body}, login {l_status} {l_body}"
    m_status, m_body = me(a, l_body["access_token"])
    figure("GET /v1/me on A with B's access token", m_status)
    r_status, r_body = me(b, s_body["access_token"])
    figure("GET /v1/me on B with A's access token", r_status)
    ok = (m_status == 200 and r_status == 200 and isinstance(m_body, dict)
          and m_body.get("email", m_body.get("user", {}).get("email")) == email)
    return ok, "" if ok else f"/v1/me on A: {m_status} {m_body}; on B: {r_status} {r_body}"


def part_1b(a, b, n=50):
    email, password = "grace@drill.example.com", "correct horse battery staple"
    signup(a, email, password)
    status, body = login(a, email, password)
    if status != 200:
        return False, f"login {status} {body}"
    token = body["refresh_token"]
    barrier = threading.Barrier(n)

    def one(i):
        barrier.wait()
        started = time.monotonic()
        status, body = refresh(a if i % 2 == 0 else b, token)
        return i % 2, status, body, time.monotonic() - started

    started = time.monotonic()
    answers = parallel(one, range(n), n)
    wall = time.monotonic() - started
    successors = {body["refresh_token"] for _, status, body, _ in answers if status == 200}
    figure("refreshes sent (A / B)", f"{n} ({sum(1 for x in answers if x[0] == 0)} / {sum(1 for x in answers if x[0] == 1)})")
    figure("answers", histogram([s for _, s, _, _ in answers]))
    figure("answers from A / B", f"{histogram([s for n_, s, _, _ in answers if n_ == 0])} / "
                                 f"{histogram([s for n_, s, _, _ in answers if n_ == 1])}")
    figure("distinct successor refresh tokens", len(successors))
    figure("burst wall time (ms), slowest answer (ms)",
           f"{wall * 1000:.0f}, {max(x[3] for x in answers) * 1000:.0f}")
    others = [(s, body) for _, s, body, _ in answers if s != 200]
    if len(successors) != 1:
        return False, f"{len(successors)} distinct successors; non-200: {others[:3]}"
    successor = successors.pop()
    s_status, s_body = refresh(b, successor)
    figure("successor refreshed on B", s_status)
    m_status = me(a, s_body["access_token"])[0] if s_status == 200 else None
    figure("its access token on A, GET /v1/me", m_status)
    ok = not others and s_status == 200 and m_status == 200
    why = "" if ok else f"non-200 in burst: {others[:3]}; successor refresh {s_status} {s_body}; /v1/me {m_status}"
    return ok, why


def part_1c(a, b, n=40):
    email, password = "victim@drill.example.com", "correct horse battery staple"
    status, body = signup(a, email, password)
    if status != 201:
        return False, f"sign-up {status} {body}"
    barrier = threading.Barrier(n)

    def one(i):
        barrier.wait()
        return login(a if i % 2 == 0 else b, email, f"wrong password {i}")[0]

    statuses = parallel(one, range(n), n)
    checked, refused = statuses.count(401), statuses.count(429)
    figure("configured limit (per account from one address)", FAILURE_LIMIT)
    figure("wrong passwords sent concurrently (A / B)", f"{n} ({(n + 1) // 2} / {n // 2})")
    figure("answers", histogram(statuses))
    figure("checked (401) / refused (429)", f"{checked} / {refused}")
    owner = login(b, email, password)[0]
    figure("then the right password from the same address", f"{owner} (429 expected: the pair is locked)")
    ok = checked == FAILURE_LIMIT and refused == n - FAILURE_LIMIT
    return ok, "" if ok else f"expected {FAILURE_LIMIT} × 401 and {n - FAILURE_LIMIT} × 429, got {histogram(statuses)}"


def part_1d(a, b, total=200, workers=16, kill_after=80):
    password = "burst password, long enough"
    lock = threading.Lock()
    completed = [0]
    kill_now = threading.Event()
    kill_info = {}

    def killer():
        kill_now.wait()
        kill_info["at"] = time.monotonic()
        kill_info["seconds"] = a.kill9()

    def one(i):
        node = a if i % 2 == 0 else b
        started = time.monotonic()
        status, body = signup(node, f"burst-{i}@drill.example.com", password)
        ended = time.monotonic()
        with lock:
            completed[0] += 1
            if completed[0] == kill_after:
                kill_now.set()
        return dict(i=i, node=node.name, status=status, body=body, started=started, ended=ended)

    thread = threading.Thread(target=killer)
    thread.start()
    started = time.monotonic()
    rows = parallel(one, range(total), workers)
    wall = time.monotonic() - started
    kill_now.set()
    thread.join()
    on_a = [r for r in rows if r["node"] == "A"]
    on_b = [r for r in rows if r["node"] == "B"]
    acked = [r for r in rows if r["status"] is not None and 200 <= r["status"] < 300]
    in_doubt = [r for r in on_a if r["status"] is None and r["started"] < kill_info["at"]]
    five = [r for r in rows if is_5xx(r["status"])]
    b_conn = [r for r in on_b if r["status"] is None]
    figure("sign-ups sent (A / B), concurrency", f"{total} ({len(on_a)} / {len(on_b)}), {workers}")
    figure("node A killed -9 after completions", f"{kill_after} (reaped in {kill_info['seconds'] * 1000:.0f} ms)")
    figure("answers from A", histogram([r["status"] for r in on_a]))
    figure("answers from B", histogram([r["status"] for r in on_b]))
    figure("acknowledged sign-ups (2xx)", len(acked))
    figure("A requests in flight at the kill (no answer)", len(in_doubt))
    figure("5xx answers (A + B) / B connection errors", f"{len(five)} / {len(b_conn)}")
    figure("burst wall time (s), acknowledged sign-ups/s", f"{wall:.2f}, {len(acked) / wall:.0f}")

    def exists(r):
        return login(b, f"burst-{r['i']}@drill.example.com", password)[0]

    survivors = parallel(exists, acked, 8)
    survived = survivors.count(200)
    figure("acknowledged sign-ups that log in on B", f"{survived} of {len(acked)}"
                                                     + (f" (others: {histogram([s for s in survivors if s != 200])})" if survived != len(acked) else ""))
    doubt = parallel(exists, in_doubt, 8)
    figure("in-flight sign-ups on A committed anyway", f"{doubt.count(200)} of {len(in_doubt)} ({histogram(doubt)})")
    in_db = psql_count(a.database_url, "SELECT COUNT(*) FROM users WHERE email LIKE 'burst-%'")
    figure("burst users in the database (acknowledged + in flight)",
           f"{in_db} ({len(acked)} + {doubt.count(200)})")
    restart = a.start()
    figure("node A restart to ready (s)", f"{restart:.2f}")
    sample = acked[0]
    again = login(a, f"burst-{sample['i']}@drill.example.com", password)[0] if acked else None
    figure("login on restarted A", again)
    lost = [r["i"] for r, s in zip(acked, survivors) if s != 200]
    ok = (survived == len(acked) and not five and not b_conn and again == 200 and len(acked) > 0
          and in_db in (None, len(acked) + doubt.count(200)))
    why = "" if ok else (f"lost acknowledged sign-ups {lost[:10]}; 5xx {[(r['node'], r['status'], r['body']) for r in five[:3]]}; "
                         f"B connection errors {[r['body'] for r in b_conn[:3]]}; login on restarted A {again}; "
                         f"burst users in the database {in_db}")
    return ok, why


# --- part 2: one node on SQLite, kill -9 mid-load ------------------------------------------------------

class User:
    def __init__(self, email, refresh_token):
        self.email, self.last = email, refresh_token
        self.acked_refreshes = 0
        self.in_flight = None          # the token presented when the server died


def part_sqlite(binary, keep, seed=48, workers=12, load_seconds=4.0):
    log("Part 2: one node on SQLite, kill -9 mid-load, restart on the same file")
    name = "2 SQLite kill -9 and restart"
    work = make_work("gatehouse-drill-sqlite.", keep)
    path = os.path.join(work, "drill.sqlite")
    env = base_env(work, f"sqlite://{path}")
    env["GATEHOUSE_WORK"] = work
    # A refresh that committed but whose answer was lost to the kill leaves the client holding the
    # parent; presenting it again gets the same successor within the grace. The drill checks after
    # the restart, so the grace must outlast kill + restart + the check (the default is 10 s).
    env["GATEHOUSE_REFRESH_GRACE"] = "60"
    port = free_port()
    env["GATEHOUSE_PUBLIC_URL"] = f"http://127.0.0.1:{port}"
    node = Node("S", binary, env, port)
    try:
        setup_database(binary, env)
        figure("node ready (s)", f"{node.start():.2f}")
        passed, why = run_sqlite_drill(node, path, work, seed, workers, load_seconds)
    except Exception as error:
        passed, why = False, f"{type(error).__name__}: {error}"
    verdict(name.split()[0], passed, why)
    if not passed:
        show_logs(node)
    node.stop()


def run_sqlite_drill(node, path, work, seed, workers, load_seconds):
    password = "load password, long enough"
    users = []
    seeded = parallel(lambda i: (i, signup(node, f"seed-{i}@drill.example.com", password)), range(seed), 8)
    for i, (status, body) in seeded:
        if status != 201:
            return False, f"seed sign-up {i}: {status} {body}"
        users.append(User(f"seed-{i}@drill.example.com", body["refresh_token"]))

    stop = threading.Event()
    lock = threading.Lock()
    counts = collections.Counter()          # requests, answers by kind
    statuses = collections.Counter()
    acked_signups, doubt_signups, unexpected = [], [], []
    all_users = list(users)

    def worker(w):
        rng = random.Random(w)
        mine = users[w::workers]
        n = 0
        while not stop.is_set():
            n += 1
            if not mine or rng.random() < 0.4:
                email = f"load-{w}-{n}@drill.example.com"
                status, body = signup(node, email, password)
                with lock:
                    counts["signup requests"] += 1
                    statuses[status] += 1
                if status == 201:
                    user = User(email, body["refresh_token"])
                    mine.append(user)
                    with lock:
                        acked_signups.append(email)
                        all_users.append(user)
                elif status is None:
                    with lock:
                        doubt_signups.append(email)
                    return
                else:
                    with lock:
                        unexpected.append(("signup", status, body))
            else:
                user = rng.choice(mine)
                status, body = refresh(node, user.last)
                with lock:
                    counts["refresh requests"] += 1
                    statuses[status] += 1
                if status == 200:
                    user.last = body["refresh_token"]
                    user.acked_refreshes += 1
                    with lock:
                        counts["acknowledged refreshes"] += 1
                elif status is None:
                    user.in_flight = user.last
                    return
                else:
                    with lock:
                        unexpected.append(("refresh", status, body))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(workers)]
    started = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(load_seconds)
    kill_at = time.monotonic()
    kill_seconds = node.kill9()
    stop.set()
    for t in threads:
        t.join()
    load_wall = kill_at - started
    with lock:
        acked_before_kill = len(acked_signups) + counts["acknowledged refreshes"]
    requests = counts["signup requests"] + counts["refresh requests"]
    in_flight_refresh = [u for u in all_users if u.in_flight]
    figure("load: workers, seconds until kill -9", f"{workers}, {load_wall:.2f}")
    figure("requests (sign-ups / refreshes)", f"{requests} ({counts['signup requests']} / {counts['refresh requests']})")
    figure("answers", histogram(list(statuses.elements())))
    figure("acknowledged sign-ups / refreshes", f"{len(acked_signups)} / {counts['acknowledged refreshes']}")
    figure("acknowledged writes per second", f"{acked_before_kill / load_wall:.0f}")
    figure("in flight at the kill (sign-ups / refreshes)", f"{len(doubt_signups)} / {len(in_flight_refresh)}")
    figure("kill -9 reaped (ms)", f"{kill_seconds * 1000:.0f}")

    # What the crash left on disk: a copy of the file and its WAL, read here so that the restarted
    # server, not this script, is the first to recover the real file.
    snapshot = os.path.join(work, "snapshot")
    os.mkdir(snapshot)
    for suffix in ("", "-wal"):
        if os.path.exists(path + suffix):
            shutil.copy(path + suffix, os.path.join(snapshot, "drill.sqlite" + suffix))
    db = sqlite3.connect(os.path.join(snapshot, "drill.sqlite"))
    users_on_disk = db.execute("SELECT COUNT(*) FROM users").fetchone()[0]
    doubt_committed = sum(1 for e in doubt_signups
                          if db.execute("SELECT 1 FROM users WHERE email = ?", (e,)).fetchone())
    rotated_unacked = sum(1 for u in in_flight_refresh
                          if db.execute("SELECT 1 FROM refresh_tokens WHERE parent_hash = ?",
                                        (hashlib.sha256(u.in_flight.encode()).hexdigest(),)).fetchone())
    db.close()
    figure("users on disk after the crash (acknowledged)", f"{users_on_disk} ({seed + len(acked_signups)} + {doubt_committed} in flight)")
    figure("in-flight sign-ups / refreshes committed", f"{doubt_committed} / {rotated_unacked}")

    restart = node.start()
    figure("restart on the same file to ready (s)", f"{restart:.2f}")

    # Refresh checks first: they rely on the grace for rotations whose answer the kill swallowed.
    def chain(user):
        s1, b1 = refresh(node, user.last)
        if s1 != 200:
            return ("last acknowledged token", s1, b1)
        s2, b2 = refresh(node, b1["refresh_token"])
        if s2 != 200:
            return ("its successor", s2, b2)
        s3, b3 = me(node, b2["access_token"])
        return ("ok", 200, None) if s3 == 200 else ("/v1/me", s3, b3)

    check_started = time.monotonic()
    chains = parallel(chain, all_users, 8)
    broken = [(u.email, c) for u, c in zip(all_users, chains) if c[0] != "ok"]
    figure("users whose last acknowledged refresh token works", f"{len(all_users) - len(broken)} of {len(all_users)}")
    logins = parallel(lambda e: login(node, e, password)[0], acked_signups, 8)
    lost = [e for e, s in zip(acked_signups, logins) if s != 200]
    figure("acknowledged sign-ups that log in after restart", f"{len(acked_signups) - len(lost)} of {len(acked_signups)}")
    figure("post-restart checks (requests, s)",
           f"{3 * len(all_users) + len(acked_signups)}, {time.monotonic() - check_started:.1f}")
    five = sum(v for k, v in statuses.items() if is_5xx(k))
    figure("5xx during the load / unexpected 4xx", f"{five} / {len(unexpected) - five}")

    ok = (not broken and not lost and not unexpected and acked_before_kill > 0
          and users_on_disk == seed + len(acked_signups) + doubt_committed)
    why = "" if ok else (f"broken chains {broken[:3]}; lost sign-ups {lost[:5]}; unexpected answers {unexpected[:3]}; "
                         f"users on disk {users_on_disk}")
    return ok, why


# --- main ---------------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description="Gatehouse fault drill")
    parser.add_argument("--binary", help="the gatehouse binary (default .build/release/gatehouse, "
                                         "else .build/debug/gatehouse)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories (logs, SQLite file)")
    parser.add_argument("--only", choices=["postgres", "sqlite"], help="run one part")
    args = parser.parse_args()
    binary = args.binary
    if not binary:
        for candidate in (".build/release/gatehouse", ".build/debug/gatehouse"):
            if os.access(os.path.join(ROOT, candidate), os.X_OK):
                binary = os.path.join(ROOT, candidate)
                break
    if not binary or not os.access(binary, os.X_OK):
        sys.exit(f"drill: no gatehouse binary ({binary or 'none built'}); build one or pass --binary PATH")
    binary = os.path.abspath(binary)

    def on_signal(number, _frame):
        raise SystemExit(128 + number)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    log(f"Gatehouse drill with {binary}")
    started = time.monotonic()
    try:
        if args.only in (None, "postgres"):
            part_postgres(binary, args.keep)
        if args.only in (None, "sqlite"):
            part_sqlite(binary, args.keep)
    except Exception as error:
        RESULTS.append(("setup", False))
        log(f"drill: {type(error).__name__}: {error}")
    finally:
        cleanup()
    failed = [part for part, passed in RESULTS if not passed]
    log(f"Drill {'FAILED: ' + ', '.join(failed) if failed else 'passed'} "
        f"({len(RESULTS) - len(failed)} of {len(RESULTS)} parts) in {time.monotonic() - started:.0f} s")
    sys.exit(1 if failed or not RESULTS else 0)


if __name__ == "__main__":
    main()
