"""Helper of scripts/fuzz: schemathesis hooks, and the summary of a run.

As hooks (SCHEMATHESIS_HOOKS=scripts/fuzz.py), with FUZZ_BASE_URL, FUZZ_CLIENT_IDS, FUZZ_CONF_CLIENT,
FUZZ_CONF_SECRET, FUZZ_EMAIL, FUZZ_LOGOUT_EMAIL and FUZZ_PASSWORD exported by scripts/fuzz (both
users exist before schemathesis starts):

- Bearer tokens. Every `/v1/me…` operation signs in as FUZZ_EMAIL; the token is kept until a
  request with it answers 401, so a fuzzed `DELETE /v1/me/sessions/{id}` that ends the current
  session does not turn the rest of the run into 401s: the next request signs in again.
  `POST /v1/logout` may end every session of its user (`scope` `global` or `others`), so it runs as
  a second user, FUZZ_LOGOUT_EMAIL, with a new session for every request. `POST /oauth/introspect`
  authenticates as the confidential client (`client_secret_basic`). Schemathesis' negative cases
  still drop or spoil these credentials on purpose (401 is documented everywhere).
- Steering. Random `client_id`s, emails and secrets only ever reach `invalid_client` and
  `invalid_credentials`; so the generated `client_id` (body, query, `Gatehouse-Client` header) is
  sometimes replaced by a client that exists, an email by the signed-up user's, and a confidential
  client's `client_secret` by its real one. Hypothesis draws the choice, so runs stay reproducible
  by seed. The fuzzed current password is never replaced: the main user's password must not change.
- Live tokens. Right before a request to `/oauth/token` (refresh grant), `/oauth/revoke` or
  `/oauth/introspect` is sent, half the generated tokens (chosen by a hash of the generated value)
  are replaced by the refresh or access token of a new session of FUZZ_LOGOUT_EMAIL.

As a program: `python3 scripts/fuzz.py summary NDJSON` reads schemathesis' NDJSON report (one
interaction per request sent) and prints what scripts/fuzz reports: responses by status, every 5xx,
every schema violation by operation and status, schemathesis' own errors, and a last line
`FIGURES requests 5xx violations no-response tool-errors finished seed`.
"""

import json
import os
import sys


def _hooks() -> None:
    import base64
    import threading
    import time
    import urllib.request
    import zlib
    from urllib.parse import quote

    import schemathesis
    from hypothesis import strategies as st

    base_url = os.environ["FUZZ_BASE_URL"]
    client_ids = [c for c in os.environ["FUZZ_CLIENT_IDS"].split(",") if c]
    conf_client = os.environ["FUZZ_CONF_CLIENT"]
    conf_secret = os.environ["FUZZ_CONF_SECRET"]
    password = os.environ["FUZZ_PASSWORD"]
    email = os.environ["FUZZ_EMAIL"]
    # The form field of each OAuth operation that carries a token.
    real_token_fields = {
        "POST /oauth/token": "refresh_token",
        "POST /oauth/revoke": "token",
        "POST /oauth/introspect": "token",
    }

    def sign_in(address: str) -> dict:
        body = json.dumps({"client_id": client_ids[0], "email": address, "password": password}).encode()
        request = urllib.request.Request(
            f"{base_url}/v1/login", data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)

    def log_in(address: str) -> str:
        return sign_in(address)["access_token"]

    def set_bearer(case, token: str) -> None:
        if case.headers is None:
            case.headers = {}
        case.headers["Authorization"] = f"Bearer {token}"

    # The main user's access token; dropped when a request with it answers 401 (a fuzzed
    # `DELETE /v1/me/sessions/{id}` may have ended its session), so the next request signs in anew.
    main_token = {"value": None, "since": 0.0}
    main_lock = threading.Lock()

    @schemathesis.auth(refresh_interval=None).apply_to(path_regex=r"^/v1/me")
    class MainUser:
        def get(self, case, context):
            with main_lock:
                if main_token["value"] is None or time.monotonic() - main_token["since"] > 300:
                    main_token["value"], main_token["since"] = log_in(email), time.monotonic()
                return main_token["value"]

        def set(self, case, data, context):
            set_bearer(case, data)

    @schemathesis.hook
    def after_call(context, case, response):
        if response.status_code == 401 and main_token["value"] is not None:
            sent = (case.headers or {}).get("Authorization")
            with main_lock:
                if sent == f"Bearer {main_token['value']}":
                    main_token["value"] = None

    @schemathesis.auth(refresh_interval=None).apply_to(operation_id="logout")
    class LogoutUser:
        def get(self, case, context):
            return log_in(os.environ["FUZZ_LOGOUT_EMAIL"])

        def set(self, case, data, context):
            set_bearer(case, data)

    @schemathesis.auth(refresh_interval=None).apply_to(operation_id="introspect")
    class ConfidentialClient:
        def get(self, case, context):
            return conf_client, conf_secret

        def set(self, case, data, context):
            if case.headers is None:
                case.headers = {}
            raw = f"{quote(data[0], safe='')}:{quote(data[1], safe='')}".encode()
            case.headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()

    def steer(values: dict, client_key: str, with_email: bool) -> st.SearchStrategy:
        """`values` with some generated strings swapped for ones the server knows."""
        choices = {}
        client = values.get(client_key)
        if isinstance(client, str):
            choices[client_key] = st.sampled_from([client, *client_ids])
        if with_email and isinstance(values.get("email"), str):
            choices["email"] = st.sampled_from([values["email"], email])
        if with_email and isinstance(values.get("password"), str):
            choices["password"] = st.sampled_from([values["password"], password])
        if not choices:
            return st.just(values)

        def merge(chosen: dict) -> dict:
            merged = {**values, **chosen}
            if merged.get(client_key) == conf_client and isinstance(merged.get("client_secret"), str):
                merged["client_secret"] = conf_secret
            return merged

        if isinstance(values.get("client_secret"), str) and client_key in choices:
            # client_secret_post with the confidential client's real secret, as one of the choices.
            return st.one_of(
                st.fixed_dictionaries(choices).map(merge),
                st.just({**values, client_key: conf_client, "client_secret": conf_secret}),
            )
        return st.fixed_dictionaries(choices).map(merge)

    @schemathesis.hook
    def flatmap_body(context, body):
        if not isinstance(body, dict):
            return st.just(body)
        return steer(body, "client_id", with_email=True)

    @schemathesis.hook
    def flatmap_query(context, query):
        if not isinstance(query, dict):
            return st.just(query)
        return steer(query, "client_id", with_email=True)

    @schemathesis.hook
    def flatmap_headers(context, headers):
        if not isinstance(headers, dict):
            return st.just(headers)
        return steer(headers, "Gatehouse-Client", with_email=False)

    @schemathesis.hook
    def before_call(context, case, kwargs):
        """Half the generated tokens of the OAuth endpoints become live ones of a new session."""
        body = case.body
        if not isinstance(body, dict) or case.operation.label not in real_token_fields:
            return
        field = real_token_fields[case.operation.label]
        value = body.get(field)
        if not isinstance(value, str) or (field == "refresh_token" and body.get("grant_type") != "refresh_token"):
            return
        pick = zlib.crc32(value.encode("utf-8", "surrogatepass")) % 4
        if pick < 2:
            tokens = sign_in(os.environ["FUZZ_LOGOUT_EMAIL"])
            body[field] = tokens["refresh_token" if field == "refresh_token" or pick == 0 else "access_token"]


def summary(path: str) -> dict:
    """Figures of one run from its NDJSON report: every request schemathesis sent is an interaction."""
    requests = server_errors = transport_errors = 0
    violations = {}  # "operation -> status": test cases whose response did not match its schema
    errors_5xx = []
    tool_errors = []  # schemathesis could not test (part of) an operation
    statuses = {}
    finished = False
    seed = None
    for line in open(path, encoding="utf-8"):
        event = json.loads(line)
        if "Initialize" in event:
            seed = event["Initialize"].get("seed")
        if "EngineFinished" in event:
            finished = True
        for kind in ("NonFatalError", "FatalError"):
            if kind in event:
                error = event[kind]
                value = error.get("value") or {}
                tool_errors.append(f"{error.get('label', '')}: {value.get('type', kind)}: {value.get('message', '')}"[:300])
        scenario = event.get("ScenarioFinished")
        if not scenario:
            continue
        recorder = scenario["recorder"]
        interactions = recorder.get("interactions", {})
        for interaction in interactions.values():
            requests += 1
            response = interaction.get("response")
            if response is None:
                transport_errors += 1
                continue
            status = response["status_code"]
            statuses[status] = statuses.get(status, 0) + 1
            if status >= 500:
                server_errors += 1
                request = interaction["request"]
                errors_5xx.append(f"{status} {request['method']} {request['uri']}")
        for case_id, checks in recorder.get("checks", {}).items():
            if any(c["name"] == "response_schema_conformance" and c["status"] == "failure" for c in checks):
                status = ((interactions.get(case_id) or {}).get("response") or {}).get("status_code")
                key = f"{recorder['label']} -> {status}"
                violations[key] = violations.get(key, 0) + 1
    return {
        "seed": seed,
        "finished": finished,
        "requests": requests,
        "server_errors": server_errors,
        "transport_errors": transport_errors,
        "schema_violations": sum(violations.values()),
        "violations": violations,
        "errors_5xx": errors_5xx,
        "tool_errors": tool_errors,
        "statuses": dict(sorted(statuses.items())),
    }


def print_summary(path: str) -> None:
    """Detail lines for the log, then `FIGURES requests 5xx violations no-response tool-errors finished seed`."""
    if not os.path.exists(path):
        print("fuzz: schemathesis wrote no report")
        print("FIGURES 0 0 0 0 1 0 none")
        return
    s = summary(path)
    print("fuzz: responses by status:", " ".join(f"{k}:{v}" for k, v in s["statuses"].items()))
    for line in s["errors_5xx"][:50]:
        print("fuzz: 5xx:", line)
    for key, count in s["violations"].items():
        print(f"fuzz: schema violation: {key} ({count} test cases)")
    for line in s["tool_errors"]:
        print("fuzz: schemathesis error:", line)
    if s["transport_errors"]:
        print(f"fuzz: {s['transport_errors']} requests got no response")
    figures = (s["requests"], s["server_errors"], s["schema_violations"], s["transport_errors"], len(s["tool_errors"]))
    print("FIGURES", *figures, int(s["finished"]), s["seed"])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "summary":
        print_summary(sys.argv[2])
    else:
        sys.exit("usage: fuzz.py summary NDJSON")
elif os.environ.get("FUZZ_BASE_URL"):
    _hooks()
