#!/usr/bin/env python3
"""The Python side of scripts/bench (standard library only).

  benchtool.py wait-ready URL PID           wait for /readyz (fails if PID dies or after 120 s)
  benchtool.py seed-signin URL DIR N [S]    N users by signUp (argon2id), DIR/idtoken.txt, S sessions' DIR/refresh.txt
  benchtool.py import URL FROM TO [C]       users FROM..TO-1 through admin accounts:batchCreate, C requests
                                            at a time (1000 users each, prehashed HMAC_SHA256); prints JSON
  benchtool.py oobcodes URL USERS COUNT OUT mint COUNT email sign-in codes with admin sendOobCode; prints JSON
  benchtool.py phone-sessions URL COUNT OUT turn phone sign-in on with ten test numbers, sign each in once,
                                            then mint COUNT sessions through sendVerificationCode; prints JSON
  benchtool.py mfa-setup URL N FILE         turn TOTP second factors on, add N users to FILE (admin create, password
                                            sign-in, TOTP enrolment): "localId enrollmentId secret lastStep"; prints JSON
  benchtool.py mfa-users FILE SIGNINS S T   how many users mfa-setup must add to FILE for SIGNINS sign-ins in a run
                                            of S seconds on T wrk threads
  benchtool.py mfa-lines FILE SIGNINS S T NBASE LINES PENDING
                                            a run's TOTP codes: LINES "n enrollmentId code" (single-use.lua, T threads),
                                            PENDING "n<TAB>localId" (mfa.setup.sql), n from NBASE; updates FILE
  benchtool.py check-wrk FILE LABEL         fail if more than 1% of a wrk run's requests failed
  benchtool.py median-rate DIR NAME         median req/s of the wrk runs DIR/NAME.<r>.txt
  benchtool.py max-rate DIR NAME            highest req/s of the wrk runs DIR/NAME.<r>.txt
  benchtool.py median-tps DIR NAME          median tps of the pgbench runs DIR/pg-NAME.<r>.txt
  benchtool.py median-primitive DIR KEY     median of an accountd-bench primitives figure over DIR/primitives.<r>.json
  benchtool.py report DIR                   the table and bench-results.json from the raw outputs in DIR
"""

import base64
import hashlib
import hmac
import http.client
import json
import math
import os
import queue
import re
import random
import statistics
import sys
import threading
import time
import urllib.parse

ADMIN = {"Content-Type": "application/json", "Authorization": "Bearer bench-admin"}
CLIENT = {"Content-Type": "application/json"}
# The imported users: user<N>@bench.example, localId u<N>, password "bench-password" prehashed with
# HMAC_SHA256(signerKey, password + salt) — a Firebase import format the service accepts without
# running a slow hash, so the import measures the service's write path.
SIGNER_KEY = b"accountd-bench-signer-key-32byte"
IMPORT_PASSWORD = b"bench-password"


def connection(url):
    parts = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)


def post(conn, path, body, headers):
    conn.request("POST", path, body=json.dumps(body).encode() if not isinstance(body, bytes) else body, headers=headers)
    reply = conn.getresponse()
    data = reply.read()
    if reply.status != 200:
        raise RuntimeError(f"POST {path}: HTTP {reply.status}: {data[:500]!r}")
    return json.loads(data)


def wait_ready(url, pid):
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            os.kill(int(pid), 0)
        except OSError:
            sys.exit(f"accountd (pid {pid}) exited before it was ready")
        try:
            conn = connection(url)
            conn.request("GET", "/readyz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit("accountd was not ready after 120 s")


def run_threads(count, target):
    errors = []

    def guarded():
        try:
            target()
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=guarded) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def for_each(url, items, threads, work):
    """Calls work(connection, item) for every item, from `threads` threads with a connection each."""
    todo = queue.Queue()
    for item in items:
        todo.put(item)

    def worker():
        conn = connection(url)
        while True:
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            work(conn, item)

    run_threads(threads, worker)


def seed_signin(url, work, n, sessions):
    """Sign-in users bench<i>@example.com (argon2id, through signUp), one ID token for verify and
    `sessions` refresh tokens (one session each, round robin over the users) for refresh."""
    tokens = {}

    def sign_up(conn, i):
        reply = post(conn, "/v1/accounts:signUp?key=bench-key",
                     {"email": f"bench{i}@example.com", "password": "bench-password"}, CLIENT)
        if i == 0:
            tokens["id"] = reply["idToken"]

    for_each(url, range(n), 4, sign_up)
    refresh = [None] * sessions

    def sign_in(conn, i):
        reply = post(conn, "/v1/accounts:signInWithPassword?key=bench-key",
                     {"email": f"bench{i % n}@example.com", "password": "bench-password"}, CLIENT)
        refresh[i] = reply["refreshToken"]

    for_each(url, range(sessions), 4, sign_in)
    with open(os.path.join(work, "idtoken.txt"), "w") as out:
        out.write(tokens["id"] + "\n")
    with open(os.path.join(work, "refresh.txt"), "w") as out:
        out.write("\n".join(refresh) + "\n")


def import_body(first, last):
    users = []
    for i in range(first, last):
        salt = hashlib.sha256(b"salt%d" % i).digest()[:16]
        digest = hmac.new(SIGNER_KEY, IMPORT_PASSWORD + salt, hashlib.sha256).digest()
        users.append({
            "localId": f"u{i:07d}", "email": f"user{i}@bench.example", "emailVerified": True,
            "passwordHash": base64.b64encode(digest).decode(), "salt": base64.b64encode(salt).decode(),
            "createdAt": 1_700_000_000_000 + i,
        })
    return json.dumps({"hashAlgorithm": "HMAC_SHA256", "signerKey": base64.b64encode(SIGNER_KEY).decode(),
                       "users": users}).encode()


def import_users(url, first, last, concurrency):
    """Imports users first..last-1, 1000 per batchCreate call, `concurrency` calls in flight. The
    request bodies are built before the clock starts so the client's CPU stays out of the timed
    window (the machine's cores are shared with the server)."""
    batches = queue.Queue()
    for start in range(first, last, 1000):
        batches.put((start, import_body(start, min(start + 1000, last))))
    failures = []

    def worker():
        conn = connection(url)
        while True:
            try:
                start, body = batches.get_nowait()
            except queue.Empty:
                return
            reply = post(conn, "/v1/projects/demo-bench/accounts:batchCreate", body, ADMIN)
            failures.extend((start + item["index"], item["message"]) for item in reply.get("error", []))

    began = time.monotonic()
    run_threads(concurrency, worker)
    seconds = time.monotonic() - began
    if failures:
        sys.exit(f"batchCreate refused {len(failures)} users, e.g. {failures[:3]}")
    users = last - first
    print(f"    {users:,} users in {seconds:.1f} s = {users / seconds:,.0f} users/s", file=sys.stderr)
    print(json.dumps({"users": users, "seconds": seconds, "usersPerSecond": users / seconds if seconds else 0,
                      "concurrency": concurrency, "batch": 1000}))


# The phone workload's ten test numbers and their fixed codes (no SMS, no SMS limits).
TEST_NUMBERS = {f"+165055500{i:02d}": f"65{i:04d}" for i in range(10)}


def phone_sessions(url, count, out_path):
    """Turns phone sign-in on with TEST_NUMBERS (the configuration resource), signs each number in
    once (its account then exists, as for a returning user), then mints `count` sign-in sessions
    through sendVerificationCode; writes "sessionInfo code" lines."""
    conn = connection(url)
    body = json.dumps({"signIn": {"phoneNumber": {"enabled": True, "testPhoneNumbers": TEST_NUMBERS}}}).encode()
    conn.request("PATCH", "/v2/projects/demo-bench/config?updateMask=signIn.phoneNumber", body=body, headers=ADMIN)
    reply = conn.getresponse()
    data = reply.read()
    if reply.status != 200:
        raise RuntimeError(f"PATCH config: HTTP {reply.status}: {data[:500]!r}")
    numbers = sorted(TEST_NUMBERS)
    for number in numbers:
        sent = post(conn, "/v1/accounts:sendVerificationCode?key=bench-key", {"phoneNumber": number}, CLIENT)
        post(conn, "/v1/accounts:signInWithPhoneNumber?key=bench-key",
             {"sessionInfo": sent["sessionInfo"], "code": TEST_NUMBERS[number]}, CLIENT)
    lines = []
    lock = threading.Lock()
    remaining = [count]

    def worker():
        conn = connection(url)
        while True:
            with lock:
                if remaining[0] == 0:
                    return
                remaining[0] -= 1
                number = numbers[remaining[0] % len(numbers)]
            sent = post(conn, "/v1/accounts:sendVerificationCode?key=bench-key", {"phoneNumber": number}, CLIENT)
            with lock:
                lines.append(f"{sent['sessionInfo']} {TEST_NUMBERS[number]}\n")

    began = time.monotonic()
    run_threads(16, worker)
    seconds = time.monotonic() - began
    random.shuffle(lines)
    with open(out_path, "w") as out:
        out.writelines(lines)
    print(f"    minted {len(lines):,} phone sessions in {seconds:.1f} s ({len(lines) / seconds:,.0f}/s)", file=sys.stderr)
    print(json.dumps({"sessions": len(lines), "seconds": seconds}))


# The mfa workload's users: each with a TOTP factor whose codes are computed here, as an
# authenticator app computes them (RFC 6238: HOTP-SHA1 of the 30 s step, six digits).
TOTP_WINDOW = 5  # adjacentIntervals as mfa-setup configures it: codes of 5 steps either side are accepted
# Seconds from mfa-lines computing a run's codes to the last request wrk sends, beyond the run's
# duration: the pending credentials' insert and wrk's start (each thread reads the lines file).
MFA_SLACK = 20
MFA_CONFIG = {"mfa": {"state": "ENABLED",
                      "providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"adjacentIntervals": TOTP_WINDOW}}]}}


def totp(secret, step):
    digest = hmac.new(secret, step.to_bytes(8, "big"), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return "%06d" % ((int.from_bytes(digest[offset:offset + 4], "big") & 0x7FFFFFFF) % 1_000_000)


def base32_secret(text):
    return base64.b32decode(text + "=" * (-len(text) % 8))


def jwt_payload(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def mfa_users(path):
    """The users of an mfa users file, each [localId, enrollmentId, base32Secret, lastStep] (lastStep
    the newest step its factor accepted or a run was given), in file order."""
    if not os.path.exists(path):
        return []
    return [line.split() for line in open(path) if line.strip()]


def mfa_setup(url, count, path):
    """Turns TOTP second factors on (the configuration resource), then adds `count` users to the
    mfa users file PATH (mfa<N>@bench.example, N after the users it has): each created by the admin
    with a verified email and a password, signed in with it (two argon2id: ~50 users/s), and
    enrolled with a TOTP factor, whose enrolment takes the code of the oldest step the window
    accepts, so that every later code is newer. Prints JSON."""
    conn = connection(url)
    conn.request("PATCH", "/v2/projects/demo-bench/config?updateMask=mfa", body=json.dumps(MFA_CONFIG).encode(), headers=ADMIN)
    reply = conn.getresponse()
    data = reply.read()
    if reply.status != 200:
        raise RuntimeError(f"PATCH config: HTTP {reply.status}: {data[:500]!r}")
    first = len(mfa_users(path))
    made = {}
    lock = threading.Lock()

    def enrol(conn, i):
        email = f"mfa{i}@bench.example"
        created = post(conn, "/v1/projects/demo-bench/accounts",
                       {"email": email, "password": "bench-password", "emailVerified": True}, ADMIN)
        signed_in = post(conn, "/v1/accounts:signInWithPassword?key=bench-key",
                         {"email": email, "password": "bench-password", "returnSecureToken": True}, CLIENT)
        started = post(conn, "/v2/accounts/mfaEnrollment:start?key=bench-key",
                       {"idToken": signed_in["idToken"], "totpEnrollmentInfo": {}}, CLIENT)["totpSessionInfo"]
        secret = base32_secret(started["sharedSecretKey"])
        for attempt in (1, 2):
            # The oldest step the window accepts if the code is checked within 5 s from now (a second
            # try, with a fresh code, if it was not: an enrolment survives four wrong codes).
            step = int(time.time() + 5) // 30 - TOTP_WINDOW
            try:
                finalized = post(conn, "/v2/accounts/mfaEnrollment:finalize?key=bench-key", {
                    "idToken": signed_in["idToken"], "displayName": "bench",
                    "totpVerificationInfo": {"sessionInfo": started["sessionInfo"], "verificationCode": totp(secret, step)}}, CLIENT)
                break
            except RuntimeError:
                if attempt == 2:
                    raise
        enrollment = jwt_payload(finalized["idToken"])["firebase"]["second_factor_identifier"]
        # The factor's last step: the newest the code could have matched (the service takes the
        # newest of equal codes in the window; that another step's code is equal is rare).
        code = totp(secret, step)
        step = max(s for s in range(step, step + 2 * TOTP_WINDOW + 2) if totp(secret, s) == code)
        with lock:
            made[i] = f"{created['localId']} {enrollment} {started['sharedSecretKey']} {step}\n"

    began = time.monotonic()
    # 32 at a time: enough to keep argon2id busy while others wait for their enrolment's new
    # session (up to a second: its valid_since is the next second), below the hashing queue's depth.
    for_each(url, range(first, first + count), 32, enrol)
    seconds = time.monotonic() - began
    with open(path, "a") as out:
        out.writelines(made[i] for i in sorted(made))
    if count:
        print(f"    {count:,} TOTP users in {seconds:.1f} s ({count / seconds:,.1f}/s)", file=sys.stderr)
    print(json.dumps({"users": count, "seconds": seconds}))


def mfa_steps(duration, now):
    """The TOTP steps every request of a run whose codes are computed at `now` can present: at most
    the window's newest at the first request, at least the window's oldest at the last one."""
    return int(now + duration + MFA_SLACK) // 30 - TOTP_WINDOW, int(now) // 30 + TOTP_WINDOW


def mfa_users_needed(path, signins, duration, threads):
    """How many users mfa-setup must add to PATH so that a run computed from now on can make
    `signins` sign-ins (a multiple of `threads`, so that each wrk thread has as many)."""
    # A user's codes in a run are the steps the window holds from the run's first request to its
    # last (11 less those that leave it: at least 2 x window + 1 - ceil((duration + slack) / 30))
    # that are newer than its last step: at least that many, or (the window's newest step now) -
    # last if fewer. A new user's enrolment took the oldest step of its window, at most 4 below
    # the step the run's codes are computed in: at least 9 of the run's steps are newer.
    per_run = min(2 * TOTP_WINDOW - 1, 2 * TOTP_WINDOW + 1 - math.ceil((duration + MFA_SLACK) / 30))
    if per_run < 1:
        sys.exit(f"mfa: a {duration} s run outlasts the TOTP window (codes of {TOTP_WINDOW} steps either side)")
    newest = mfa_steps(duration, time.time())[1]
    have = sum(max(0, min(per_run, newest - int(user[3]))) for user in mfa_users(path))
    missing = math.ceil(max(0, signins - have) / per_run)
    return math.ceil(missing / threads) * threads


def mfa_lines(path, signins, duration, threads, nbase, lines_path, pending_path):
    """A run's sign-ins over the users of PATH: lines "n enrollmentId code" for single-use.lua, and
    "n<TAB>localId" for mfa.setup.sql, which writes the pending credential n for the user (the
    first factor's sign-in). User u is thread u % threads's (thread t takes lines t, t + threads, …,
    on its one connection): each thread goes through the steps oldest first, each step through all
    its users, so a user's codes go out oldest first and no two at once. Every step is one whose
    code the window accepts during the whole run (mfa_steps) and newer than the user's last; the
    users' last steps in PATH become the newest given out."""
    users = mfa_users(path)
    now = time.time()
    first, last = mfa_steps(duration, now)
    # Steps the window can reach before the last request: a code equal to one of a newer step
    # there (about 1 in 10^5) would be taken for that step, and the user's next codes refused.
    reach = int(now + duration + MFA_SLACK) // 30 + TOTP_WINDOW
    codes = {}
    for user in users:
        secret = base32_secret(user[2])
        codes[user[0]] = {step: totp(secret, step) for step in range(first, reach + 1)}
    sequences = []
    for t in range(threads):
        mine = users[t::threads]
        sequence = []
        for step in range(first, last + 1):
            for user in mine:
                own = codes[user[0]]
                if step > int(user[3]) and own[step] not in (own[later] for later in range(step + 1, reach + 1)):
                    sequence.append((user, step))
        sequences.append(sequence)
    length = min([len(s) for s in sequences] + [math.ceil(signins / threads)])
    lines, pending = [], []
    n = nbase
    for j in range(length):
        for sequence in sequences:
            user, step = sequence[j]
            lines.append(f"{n} {user[1]} {codes[user[0]][step]}\n")
            pending.append(f"{n}\t{user[0]}\n")
            user[3] = str(max(int(user[3]), step))
            n += 1
    with open(lines_path, "w") as out:
        out.writelines(lines)
    with open(pending_path, "w") as out:
        out.writelines(pending)
    with open(path + ".new", "w") as out:
        out.writelines(" ".join(user) + "\n" for user in users)
    os.replace(path + ".new", path)
    print(f"    mfa: {len(lines):,} sign-ins over {len(users):,} users, TOTP steps {first}…{last} "
          f"({time.time() - now:.1f} s to compute)", file=sys.stderr)
    if len(lines) < signins:
        print(f"    mfa: WARNING: {signins:,} sign-ins wanted, the users' codes allow {len(lines):,}", file=sys.stderr)


def oobcodes(url, users, count, out_path):
    """Mints `count` EMAIL_SIGNIN codes for random imported users with admin sendOobCode
    (returnOobLink: the code comes back, no email is queued); writes "email code" lines."""
    lines = []
    lock = threading.Lock()
    # Each code for a different user: a newer code of a kind retires the user's earlier unspent one
    # (as Firebase does), so a second code for one user would leave the first dead.
    if count > users:
        sys.exit(f"emaillink needs a code per request and a user per code: {count:,} codes, only {users:,} users "
                 f"(run with --users {count:,} or more)")
    order = random.sample(range(users), count)
    remaining = [count]
    body = ('{"requestType":"EMAIL_SIGNIN","email":"user%d@bench.example","returnOobLink":true,'
            '"continueUrl":"http://localhost/bench","canHandleCodeInApp":true}')

    def worker():
        conn = connection(url)
        while True:
            with lock:
                if remaining[0] == 0:
                    return
                remaining[0] -= 1
                user = order[remaining[0]]
            reply = post(conn, "/v1/projects/demo-bench/accounts:sendOobCode", (body % user).encode(), ADMIN)
            code = reply.get("oobCode") or urllib.parse.parse_qs(urllib.parse.urlsplit(reply["oobLink"]).query)["oobCode"][0]
            with lock:
                lines.append(f"{reply['email']} {code}\n")

    began = time.monotonic()
    run_threads(16, worker)
    seconds = time.monotonic() - began
    with open(out_path, "w") as out:
        out.writelines(lines)
    print(f"    minted {len(lines):,} codes in {seconds:.1f} s ({len(lines) / seconds:,.0f}/s)", file=sys.stderr)
    print(json.dumps({"codes": len(lines), "seconds": seconds}))


# ---------------------------------------------------------------------------------------------
# Report

def ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def parse_wrk(path):
    text = open(path).read()
    rate = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not rate:
        sys.exit(f"no wrk summary in {path}:\n{text}")
    done = int(re.search(r"(\d+) requests in", text).group(1))
    figures = {"reqPerSec": float(rate.group(1)), "requests": done}
    for pct in ("50", "90", "99"):
        m = re.search(pct + r"%\s+([\d.]+)(us|ms|s|m)\b", text)
        figures[f"p{pct}ms"] = ms(*m.groups()) if m else None
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    figures["non2xx"] = int(errors.group(1)) if errors else 0
    figures["socketErrors"] = sum(int(x) for x in socket.groups()) if socket else 0
    exhausted = re.search(r"codes exhausted: (\d+)", text)
    if exhausted:
        figures["codesExhausted"] = int(exhausted.group(1))
    statuses = re.findall(r"^status (\d+): (\d+)$", text, re.M)
    if statuses:
        figures["statuses"] = {int(code): int(count) for code, count in statuses}
    return figures


def idp_setup(url, issuer, tokens_path):
    """Configures oidc.bench against the fixture issuer, then signs every fixture user in once (the
    workload measures returning users)."""
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=60)
    conn.request("POST", "/v2/projects/demo-bench/oauthIdpConfigs?oauthIdpConfigId=oidc.bench",
                 json.dumps({"clientId": "bench-client", "issuer": issuer, "enabled": True}),
                 {"Content-Type": "application/json", "Authorization": "Bearer bench-admin"})
    reply = conn.getresponse()
    body = reply.read()
    if reply.status != 200:
        sys.exit(f"configuring oidc.bench failed: {reply.status} {body[:300]}")
    tokens = [line.strip() for line in open(tokens_path) if line.strip()]

    def first_sign_in(conn, i):
        post(conn, "/v1/accounts:signInWithIdp?key=bench-key",
             {"requestUri": "http://localhost", "postBody": f"providerId=oidc.bench&id_token={tokens[i]}"}, CLIENT)

    for_each(url, range(len(tokens)), 4, first_sign_in)
    print(f"    federated: oidc.bench configured, {len(tokens)} users signed in once", file=sys.stderr)


def flood_figures(work, r):
    """One repeat of the flood workload: honest sign-ins alone and during the flood, and the flood."""
    alone, during, flood = (parse_wrk(os.path.join(work, f"{name}.{r}.txt")) for name in ("honest-alone", "honest-flood", "flood"))

    def share(figures, status):
        total = sum(figures.get("statuses", {}).values())
        return figures.get("statuses", {}).get(status, 0) / total if total else None
    return {
        "honestAloneP99ms": alone["p99ms"], "honestFloodP99ms": during["p99ms"],
        "honestAloneReqPerSec": alone["reqPerSec"], "honestFloodReqPerSec": during["reqPerSec"],
        "honestAloneStatuses": alone.get("statuses", {}), "honestFloodStatuses": during.get("statuses", {}),
        "honestFlood200Share": share(during, 200), "honestFlood503Share": share(during, 503),
        "floodReqPerSec": flood["reqPerSec"], "floodStatuses": flood.get("statuses", {}),
        "floodP99ms": flood["p99ms"],
    }


def flood_line(work, r):
    f = flood_figures(work, int(r))
    ratio = f["honestFloodP99ms"] / f["honestAloneP99ms"] if f["honestAloneP99ms"] else float("nan")
    print(f"    flood {r}: honest p99 {f['honestAloneP99ms']:.1f} ms alone, {f['honestFloodP99ms']:.1f} ms during the flood "
          f"(x{ratio:.1f}); honest answered {f['honestFloodStatuses']} during it; the flood {f['floodReqPerSec']:,.0f} req/s "
          f"answered {f['floodStatuses']}", file=sys.stderr)


def parse_pgbench(path):
    text = open(path).read()
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", text)
    if not tps or "aborted" in text.lower():
        sys.exit(f"pgbench failed ({path}):\n{text[-3000:]}")
    processed = re.search(r"number of transactions actually processed: (\d+)", text)
    latency = re.search(r"latency average = ([\d.]+) ms", text)
    return {"tps": float(tps.group(1)), "transactions": int(processed.group(1)) if processed else None,
            "latencyAvgMs": float(latency.group(1)) if latency else None}


def rss_peak(path):
    values = [int(x) for x in open(path).read().split()] if os.path.exists(path) else []
    return max(values) if values else None


def repeats_of(work, prefix, suffix=".txt"):
    found = []
    r = 1
    while os.path.exists(os.path.join(work, f"{prefix}.{r}{suffix}")):
        found.append(r)
        r += 1
    return found


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def primitives(work):
    """The medians of the per-repeat accountd-bench primitives runs (and the runs themselves)."""
    numbers = repeats_of(work, "primitives", ".json")
    runs = [json.load(open(os.path.join(work, f"primitives.{r}.json"))) for r in numbers]
    if not runs:
        return None
    raw = dict(runs[0])
    for key in ("argon2idHashesPerSecond", "argon2idVerifiesPerSecond", "rs256SignsPerSecond", "rs256VerifiesPerSecond"):
        raw[key] = median(run[key] for run in runs)
    raw["repeats"] = runs
    raw["stealPercent"] = [steal_percent(os.path.join(work, f"primitives.{r}.cpu")) for r in numbers]
    # Sign-in's reference: per repeat, the mean of the argon2id verify rate measured just before the
    # sign-in run (the primitives' last figure) and just after it (argon2-after.R.json); the median
    # of those over the repeats. Without the second bracket, the primitives' own figure.
    after = {r: json.load(open(os.path.join(work, f"argon2-after.{r}.json")))["argon2idVerifiesPerSecond"]
             for r in repeats_of(work, "argon2-after", ".json")}
    around = [(run["argon2idVerifiesPerSecond"] + after[r]) / 2 for r, run in zip(numbers, runs) if r in after]
    raw["argon2idVerifiesAfterSignIn"] = [after[r] for r in sorted(after)]
    raw["argon2idVerifiesAroundSignInPerRepeat"] = around
    raw["argon2idVerifiesAroundSignIn"] = median(around) if around else raw["argon2idVerifiesPerSecond"]
    raw["argon2AfterStealPercent"] = [steal_percent(os.path.join(work, f"argon2-after.{r}.cpu")) for r in sorted(after)]
    return raw


def steal_percent(path):
    """The share of CPU time the hypervisor stole between the two /proc/stat lines in PATH."""
    try:
        lines = open(path).read().split("\n")
        first, last = ([int(x) for x in line.split()[1:9]] for line in lines[:2])
    except (OSError, ValueError):
        return None
    total = sum(last) - sum(first)
    return 100.0 * (last[7] - first[7]) / total if total > 0 else None


def server_cpu_us(path, requests):
    """The server's CPU time per request in µs, from the two /proc/PID/stat marks in PATH (or the
    cluster's, from scripts/bench's pg_mark lines)."""
    try:
        marks = [[int(x) for x in line.split()] for line in open(path) if line.strip()]
    except OSError:
        return None
    if len(marks) < 2 or requests <= 0:
        return None
    ticks = sum(marks[-1]) - sum(marks[0])
    return ticks * 1e6 / os.sysconf("SC_CLK_TCK") / requests


def percents(values):
    """Whole percentages, space-separated; a run without a measurement shows as a dash."""
    return " ".join("—" if x is None else f"{x:.0f}" for x in values)


def report(work):
    meta = json.load(open(os.path.join(work, "meta.json")))
    workloads, pgbench, problems = {}, {}, []

    def wrk_workload(name):
        runs = repeats_of(work, name)
        if not runs:
            return None
        parsed = [parse_wrk(os.path.join(work, f"{name}.{r}.txt")) for r in runs]
        peaks = [rss_peak(os.path.join(work, f"{name}.{r}.rss")) for r in runs]
        total = sum(p["requests"] for p in parsed)
        bad = sum(p["non2xx"] + p["socketErrors"] for p in parsed)
        entry = {
            "reqPerSec": median(p["reqPerSec"] for p in parsed),
            "p50ms": median(p["p50ms"] for p in parsed),
            "p99ms": median(p["p99ms"] for p in parsed),
            "requests": total, "non2xx": sum(p["non2xx"] for p in parsed),
            "socketErrors": sum(p["socketErrors"] for p in parsed),
            "repeats": parsed,
            "rssPeakKiB": peaks,
            "stealPercent": [steal_percent(os.path.join(work, f"{name}.{r}.cpu")) for r in runs],
            "serverCPUMicrosecondsPerRequest": [server_cpu_us(os.path.join(work, f"{name}.{r}.proc"), p["requests"])
                                                for r, p in zip(runs, parsed)],
            "postgresCPUMicrosecondsPerRequest": [server_cpu_us(os.path.join(work, f"{name}.{r}.pgproc"), p["requests"])
                                                  for r, p in zip(runs, parsed)],
        }
        if any(p.get("codesExhausted") for p in parsed):
            entry["codesExhausted"] = sum(p.get("codesExhausted", 0) for p in parsed)
            problems.append(f"{name}: ran out of pre-minted codes ({entry['codesExhausted']} requests)")
        if total == 0 or bad / total > 0.01:
            problems.append(f"{name}: {bad} of {total} requests failed (non-2xx or socket errors), more than 1%")
        if all(peaks):
            entry["rssPeakMiB"] = max(peaks) / 1024
            entry["rssGrowthMiB"] = (peaks[-1] - peaks[0]) / 1024 if len(peaks) > 1 else None
        workloads[name] = entry
        return entry

    def pg_reference(name):
        runs = repeats_of(work, f"pg-{name}")
        if not runs:
            return None
        parsed = [parse_pgbench(os.path.join(work, f"pg-{name}.{r}.txt")) for r in runs]
        pgbench[name] = {"tps": median(p["tps"] for p in parsed), "repeats": parsed, "mode": "prepared",
                         "script": f"scripts/bench.d/{name.split('@')[0]}.sql",
                         "stealPercent": [steal_percent(os.path.join(work, f"pg-{name}.{r}.cpu")) for r in runs],
                         "postgresCPUMicrosecondsPerTransaction": [
                             server_cpu_us(os.path.join(work, f"pg-{name}.{r}.pgproc"), p["transactions"] or 0)
                             for r, p in zip(runs, parsed)]}
        extended = os.path.join(work, f"pg-{name}.extended.txt")
        if os.path.exists(extended):
            # Diagnostic, one run: -M extended re-parses and re-plans every statement, as the
            # service's driver does (unnamed statements); not the reference.
            pgbench[name]["extendedTps"] = parse_pgbench(extended)["tps"]
        return pgbench[name]

    def driver_reference(name):
        # accountd-bench sql: the lookup's statement through the service's store and PostgresNIO
        # pool, no HTTP (the driver's share of a lookup, between pgbench's and the service's).
        runs = repeats_of(work, f"driver-{name}", ".json")
        if not runs:
            return None
        parsed = [json.load(open(os.path.join(work, f"driver-{name}.{r}.json"))) for r in runs]
        drivers[name] = {"queriesPerSecond": median(p["queriesPerSecond"] for p in parsed),
                         "clientCPUMicrosecondsPerQuery": median(p["clientCPUMicrosecondsPerQuery"] for p in parsed),
                         "repeats": parsed,
                         "stealPercent": [steal_percent(os.path.join(work, f"driver-{name}.{r}.cpu")) for r in runs]}
        return drivers[name]

    for name in ["trivial", "verify", "verify-first", "signin", "signin-limits", "refresh", "refresh-half", "federated", "phone",
                 "lookup@small", "lookup", "lookup-half", "emaillink", "mfa"]:
        wrk_workload(name)
    drivers = {}
    for name in ["lookup@small", "lookup"]:
        driver_reference(name)
    for name in ["signin", "refresh", "federated", "phone", "lookup@small", "lookup", "emaillink", "mfa"]:
        pg_reference(name)
    raw = primitives(work)

    # Seeding runs in phases (the small lookup point, then the rest): totals over the phases.
    phases = [json.load(open(os.path.join(work, f"seed.{r}.json"))) for r in repeats_of(work, "seed", ".json")]
    seeding = None
    if phases:
        users, seconds = sum(p["users"] for p in phases), sum(p["seconds"] for p in phases)
        peaks = [rss_peak(os.path.join(work, f"seed.{r}.rss")) for r in range(1, len(phases) + 1)]
        seeding = {"users": users, "seconds": seconds, "usersPerSecond": users / seconds,
                   "concurrency": phases[0]["concurrency"], "batch": phases[0]["batch"], "phases": phases,
                   "rssPeakKiB": max([p for p in peaks if p] or [0]) or None}
    copies = [json.load(open(os.path.join(work, f"copy.{r}.json"))) for r in repeats_of(work, "copy", ".json")]
    copy = None
    if copies:
        copy = {"rowsPerSecond": median(c["users"] / c["seconds"] for c in copies), "repeats": copies}

    rows = []  # (workload, figure, measured, reference label, reference value, ratio, target text, pass?)

    def check(label, figure, measured, ref_label, ref_value, target, at_least=True, ratio=None):
        if ratio is None and measured is not None and ref_value:
            ratio = measured / ref_value
        ok = None if ratio is None else (ratio >= target if at_least else ratio <= target)
        rows.append((label, figure, measured, ref_label, ref_value, ratio, ("≥ " if at_least else "≤ ") + f"{target:g}", ok))
        return ratio

    def repeat_ratios(measured, references):
        """Repeat r of a workload over repeat r of its reference, when both sides have one figure per
        repeat: the two ran next to each other, so that pair saw the same host (the median of each
        side can come from different repeats, minutes apart). None when the sides do not pair up."""
        if not measured or len(measured) != len(references):
            return None
        if any(m is None for m in measured) or not all(references):
            return None
        return [m / r for m, r in zip(measured, references)]

    def paired(measured, references, fallback=None):
        """The median of ``repeat_ratios``; `fallback` when the sides do not pair up (``check`` then
        takes the ratio of the medians)."""
        pairs = repeat_ratios(measured, references)
        return median(pairs) if pairs else fallback

    def per_repeat(entry, key):
        return [r[key] for r in entry["repeats"]]

    ratios, bounds = {}, {}
    w = workloads
    if "trivial" in w:
        rows.append(("trivial route GET /healthz", "req/s", w["trivial"]["reqPerSec"], "", None, None, "", None))
        rows.append(("", "p99 ms", w["trivial"]["p99ms"], "", None, None, "", None))
    def bound_of(rates):
        return 1 / sum(1 / r for r in rates)

    def combined(label, name, parts, target):
        """A row against the workload's combined bound (docs: DESIGN's table): 1 / Σ 1/rate of its
        parts, each (short label, median, per-repeat rates or None); the ratio pairs repeat r of
        the workload with the bound of repeat r of every part, when they all pair up."""
        now = bound_of([value for _, value, _ in parts])
        runs = len(w[name]["repeats"])
        per = None
        if all(rates is not None and len(rates) == runs and all(rates) for _, _, rates in parts):
            per = [bound_of(list(rates)) for rates in zip(*[rates for _, _, rates in parts])]
        text = "1/(" + " + ".join(f"1/{part}" for part, _, _ in parts) + ")"
        bounds[name] = {"bound": now, "from": text, "measured": w[name]["reqPerSec"], "perRepeat": per}
        ratio = check(label, "req/s", w[name]["reqPerSec"], text, now, target,
                      ratio=paired(per_repeat(w[name], "reqPerSec"), per) if per else None)
        bounds[name]["ratio"] = ratio
        return ratio

    trivial_part = None
    if "trivial" in w:
        trivial_part = ("trivial", w["trivial"]["reqPerSec"], per_repeat(w["trivial"], "reqPerSec"))
    if "verify" in w and trivial_part:
        ratios["verify / combined bound"] = combined("verifyIdToken checkRevoked", "verify", [trivial_part], 0.8)
        ratios["verify p99 / trivial p99"] = check(
            "", "p99 ms", w["verify"]["p99ms"], "trivial p99 ms", w["trivial"]["p99ms"], 1.5, at_least=False,
            ratio=paired(per_repeat(w["verify"], "p99ms"), per_repeat(w["trivial"], "p99ms")))
    if "verify-first" in w and "trivial" in w:
        # Informative: every verification checks the signature (the verified-token cache off).
        first, trivial = w["verify-first"], w["trivial"]
        ratios["verify, cache off / trivial req/s"] = paired(
            per_repeat(first, "reqPerSec"), per_repeat(trivial, "reqPerSec"), first["reqPerSec"] / trivial["reqPerSec"])
        ratios["verify, cache off p99 / trivial p99"] = paired(
            per_repeat(first, "p99ms"), per_repeat(trivial, "p99ms"), first["p99ms"] / trivial["p99ms"])
        rows.append(("  same, token cache off", "req/s", first["reqPerSec"], "trivial route req/s", trivial["reqPerSec"],
                     ratios["verify, cache off / trivial req/s"], "", None))
        rows.append(("", "p99 ms", first["p99ms"], "trivial p99 ms", trivial["p99ms"],
                     ratios["verify, cache off p99 / trivial p99"], "", None))
    if raw and trivial_part:
        sign = ("RS256 sign", raw["rs256SignsPerSecond"], per_repeat(raw, "rs256SignsPerSecond"))
        verify = ("RS256 verify", raw["rs256VerifiesPerSecond"], per_repeat(raw, "rs256VerifiesPerSecond"))

        def sql(name):
            return (f"pgbench {name}.sql", pgbench[name]["tps"], per_repeat(pgbench[name], "tps"))
        if "signin" in w and "signin" in pgbench:
            # Each sign-in repeat is set against the argon2id rate measured around it.
            around = raw["argon2idVerifiesAroundSignInPerRepeat"] or per_repeat(raw, "argon2idVerifiesPerSecond")
            ratios["signin / combined bound"] = combined(
                "password sign-in", "signin",
                [("argon2id", raw["argon2idVerifiesAroundSignIn"], around), sign, sql("signin"), trivial_part], 0.9)
        if "refresh" in w and "refresh" in pgbench:
            ratios["refresh / combined bound"] = combined("token refresh /v1/token", "refresh", [trivial_part, sign, sql("refresh")], 0.8)
        if "federated" in w and "federated" in pgbench:
            ratios["federated / combined bound"] = combined(
                "federated sign-in (JWKS cached)", "federated", [trivial_part, verify, sign, sql("federated")], 0.8)
        if "phone" in w and "phone" in pgbench:
            ratios["phone / combined bound"] = combined("phone sign-in (test number)", "phone", [trivial_part, sign, sql("phone")], 0.8)
        if "mfa" in w and "mfa" in pgbench:
            ratios["mfa / combined bound"] = combined("MFA sign-in, TOTP (finalize)", "mfa", [trivial_part, sign, sql("mfa")], 0.8)
    for size, key in (("lookup@small", f"lookup @ {meta.get('smallUsers', 0):,} users"),
                      ("lookup", f"lookup @ {meta.get('users', 0):,} users")):
        if size in w and size in pgbench and trivial_part:
            ratios[f"{key} / combined bound"] = combined(
                f"admin {key}", size,
                [trivial_part, ("pgbench lookup.sql", pgbench[size]["tps"], per_repeat(pgbench[size], "tps"))], 0.8)
            rows.append(("", "p50 ms", w[size]["p50ms"], "", None, None, "", None))
            rows.append(("", "p99 ms", w[size]["p99ms"], "", None, None, "", None))
            if size in drivers:
                d = drivers[size]["queriesPerSecond"]
                rows.append(("  same SELECT via PostgresNIO", "queries/s, no HTTP", d, "pgbench lookup.sql tps",
                             pgbench[size]["tps"], d / pgbench[size]["tps"], "", None))
                ratios[f"{key} PostgresNIO alone / pgbench"] = d / pgbench[size]["tps"]
                ratios[f"{key} / PostgresNIO alone"] = w[size]["reqPerSec"] / d
    if "lookup-half" in w and "lookup" in w:
        half = w["lookup-half"]
        share = half["reqPerSec"] / w["lookup"]["reqPerSec"]
        half["shareOfPeak"] = share
        half["targetReqPerSec"] = meta.get("lookupHalfTarget")
        rows.append(("lookup at ~50% of peak", "req/s", half["reqPerSec"], "lookup peak req/s", w["lookup"]["reqPerSec"],
                     share, "0.4–0.6", 0.4 <= share <= 0.6))
        rows.append(("", "p50 ms", half["p50ms"], "", None, None, "", None))
        p99_ok = half["p99ms"] is not None and half["p99ms"] <= 10.0
        rows.append(("", "p99 ms", half["p99ms"], "", None, None, "≤ 10 ms", p99_ok))
        ratios["lookup-half share of peak"] = share
    if "refresh-half" in w and "refresh" in w:
        # The refresh's latency at about half its peak (informative: DESIGN sets no p99 for it).
        half = w["refresh-half"]
        share = half["reqPerSec"] / w["refresh"]["reqPerSec"]
        half["shareOfPeak"] = share
        rows.append(("refresh at ~50% of peak", "req/s", half["reqPerSec"], "refresh peak req/s", w["refresh"]["reqPerSec"],
                     share, "0.4–0.6", 0.4 <= share <= 0.6))
        rows.append(("", "p50 ms", half["p50ms"], "", None, None, "", None))
        rows.append(("", "p99 ms", half["p99ms"], "", None, None, "", None))
        ratios["refresh-half share of peak"] = share
    if "emaillink" in w and "emaillink" in pgbench and raw and trivial_part:
        ratios["emaillink / combined bound"] = combined(
            "email-link sign-in completion", "emaillink",
            [trivial_part, ("RS256 sign", raw["rs256SignsPerSecond"], per_repeat(raw, "rs256SignsPerSecond")),
             ("pgbench emaillink.sql", pgbench["emaillink"]["tps"], per_repeat(pgbench["emaillink"], "tps"))], 0.8)
    if seeding:
        rate = seeding["usersPerSecond"]
        if copy:
            ratios["import / COPY"] = check("import batchCreate prehashed", "users/s", rate, "COPY users+credentials rows/s",
                                            copy["rowsPerSecond"], 0.8)
        else:
            rows.append(("import batchCreate prehashed", "users/s", rate, "", None, None, "", None))
        projected = seeding["seconds"] * 1_000_000 / seeding["users"]
        seeding["secondsFor1M"] = projected
        seeding["secondsFor1MProjected"] = seeding["users"] < 1_000_000
        rows.append(("", "s for 1M users" + (" (projected)" if seeding["users"] < 1_000_000 else ""), projected,
                     "", None, None, "≤ 60 s", projected <= 60))

    # Memory: peak server RSS per repeat; growth = last repeat's peak - first's.
    memory = {}
    for name, entry in w.items():
        peaks = entry.get("rssPeakKiB") or []
        if peaks and all(peaks):
            growth = (peaks[-1] - peaks[0]) if len(peaks) > 1 else None
            # "No growth": within max(8 MiB, 5 % of the first peak) — allocator noise, not a leak.
            ok = None if growth is None else growth <= max(8 * 1024, 0.05 * peaks[0])
            memory[name] = {"peakKiBPerRepeat": peaks, "peakMiB": max(peaks) / 1024,
                            "growthMiB": None if growth is None else growth / 1024, "noGrowth": ok}
    if seeding and seeding.get("rssPeakKiB"):
        memory["import (seeding)"] = {"peakKiBPerRepeat": [seeding["rssPeakKiB"]], "peakMiB": seeding["rssPeakKiB"] / 1024,
                                      "growthMiB": None, "noGrowth": None}

    # Flatness of indexed lookups from the small user count to the full one.
    flat = None
    if "lookup@small" in w and "lookup" in w:
        flat = {"smallUsers": meta.get("smallUsers"), "users": meta.get("users"),
                "serviceReqPerSec": [w["lookup@small"]["reqPerSec"], w["lookup"]["reqPerSec"]],
                "serviceP99ms": [w["lookup@small"]["p99ms"], w["lookup"]["p99ms"]],
                "serviceRatio": w["lookup"]["reqPerSec"] / w["lookup@small"]["reqPerSec"]}
        if "lookup@small" in pgbench and "lookup" in pgbench:
            flat["pgbenchTps"] = [pgbench["lookup@small"]["tps"], pgbench["lookup"]["tps"]]
            flat["pgbenchRatio"] = pgbench["lookup"]["tps"] / pgbench["lookup@small"]["tps"]

    # ---- print
    def fmt(v, digits=None):
        if v is None:
            return "—"
        if isinstance(v, bool):
            return str(v)
        if digits is not None:
            return f"{v:.{digits}f}"
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"

    print()
    print(f"accountd bench: {meta['duration']} s x {meta['repeats']} repeat(s) (medians), {meta['machine']['nproc']} cores "
          f"({meta['machine']['cpu']}), PostgreSQL {meta['machine']['postgres']}, {meta['date']}")
    load = meta.get("loadAverageAtStart")
    if load and load[0] > 0.5 * meta["machine"]["nproc"]:
        print(f"WARNING: the machine was busy before the bench started (load average {load[0]:.2f} on "
              f"{meta['machine']['nproc']} cores; {meta['loadAverageAtEnd'][0]:.2f} at the end): the figures share the cores "
              f"with other work and are not this service's limits.")
    head = f"{'workload':<34}{'figure':<26}{'measured':>10}  {'reference':<56}{'ref':>10}{'ratio':>7}  {'target':<9}{'result':>6}"
    print(head)
    print("-" * len(head))
    for label, figure, measured, ref_label, ref_value, ratio, target, ok in rows:
        result = "" if ok is None else ("PASS" if ok else "FAIL")
        print(f"{label:<34}{figure:<26}{fmt(measured):>10}  {ref_label:<56}{fmt(ref_value) if ref_label else '':>10}"
              f"{fmt(ratio, 2) if ratio is not None else '':>7}  {target:<9}{result:>6}")
    if int(meta.get("repeats", 1)) > 1:
        print("(measured and reference are each side's median; a ratio against a reference that ran next to each repeat is\n"
              " the median of the per-repeat ratios, repeat r against repeat r, so it need not equal their quotient)")
    if memory:
        print()
        print(f"{'server RSS (peak, MiB)':<34}{'per repeat':<30}{'growth':>8}  result")
        for name, m in memory.items():
            per = " ".join(f"{p / 1024:.0f}" for p in m["peakKiBPerRepeat"])
            result = "n/a (1 repeat)" if m["noGrowth"] is None else ("PASS" if m["noGrowth"] else "FAIL")
            print(f"{name:<34}{per:<30}{fmt(m['growthMiB'], 1):>8}  {result}")
    steal = [(name, w["stealPercent"], pgbench.get(name, {}).get("stealPercent"))
             for name, w in workloads.items() if any(x is not None for x in w.get("stealPercent", []))]
    if steal:
        print()
        print("hypervisor steal (% of the machine's CPU time taken by the host during each run; a ratio is only as "
              "good as the two sides' steal is alike):")
        for name, service, reference in steal:
            line = f"  {name:<14} service {percents(service):<16}"
            if reference:
                line += " reference " + percents(reference)
            print(line)
        for name, d in drivers.items():
            print(f"  {name + ' driver':<14} " + percents(d["stealPercent"]))
        if raw and any(x is not None for x in raw.get("stealPercent", [])):
            print(f"  {'primitives':<14} " + percents(raw["stealPercent"]))
            if raw["argon2AfterStealPercent"]:
                print(f"  {'argon2id after':<14} " + percents(raw["argon2AfterStealPercent"]))
    if flat:
        print()
        line = (f"lookup flatness {flat['smallUsers']:,} -> {flat['users']:,} users: service "
                f"{flat['serviceReqPerSec'][0]:,.0f} -> {flat['serviceReqPerSec'][1]:,.0f} req/s (x{flat['serviceRatio']:.2f}), "
                f"p99 {flat['serviceP99ms'][0]:.2f} -> {flat['serviceP99ms'][1]:.2f} ms")
        if "pgbenchTps" in flat:
            line += f"; pgbench {flat['pgbenchTps'][0]:,.0f} -> {flat['pgbenchTps'][1]:,.0f} tps (x{flat['pgbenchRatio']:.2f})"
        print(line)
    if seeding:
        print()
        print(f"seeding: {seeding['users']:,} users through batchCreate in {seeding['seconds']:.1f} s "
              f"({seeding['usersPerSecond']:,.0f} users/s, {seeding['concurrency']} requests in flight x 1000 users)"
              + (f"; COPY of the same rows: {copy['rowsPerSecond']:,.0f} users/s" if copy else ""))
    if raw:
        print()
        print(f"raw primitives ({raw['workers']} workers): argon2id {raw['argon2idHashesPerSecond']:,.1f}/s hash, "
              f"{raw['argon2idVerifiesPerSecond']:,.1f}/s verify (m={raw['argon2idMemoryKiB']} KiB, t={raw['argon2idIterations']}); "
              f"RS256 {raw['rs256SignsPerSecond']:,.0f}/s sign, {raw['rs256VerifiesPerSecond']:,.0f}/s verify")
        if raw["argon2idVerifiesAfterSignIn"]:
            before = " / ".join(f"{run['argon2idVerifiesPerSecond']:,.1f}" for run in raw["repeats"])
            after = " / ".join(f"{x:,.1f}" for x in raw["argon2idVerifiesAfterSignIn"])
            print(f"  sign-in's reference: argon2id verify/s just before each sign-in run {before}, just after {after}; "
                  f"median of the per-repeat means {raw['argon2idVerifiesAroundSignIn']:,.1f}")
            pairs = ratios.get("signin / raw argon2id verify, per repeat")
            if pairs:
                print("  sign-in / argon2id around it, per repeat: " + " / ".join(f"{x:.2f}" for x in pairs)
                      + " (the table's ratio is their median)")
    if pgbench:
        print("pgbench references (-M prepared, same clients as wrk): " + ", ".join(
            f"{k} {v['tps']:,.0f} tps" for k, v in pgbench.items()))
        if any("extendedTps" in v for v in pgbench.values()):
            print("  diagnostic, the same scripts with -M extended (parsed and planned per call, like the service's "
                  "unnamed statements; 1 run): " + ", ".join(
                      f"{k} {v['extendedTps']:,.0f} tps" for k, v in pgbench.items() if "extendedTps" in v))
    if "signin" in workloads and "signin-limits" in workloads:
        on, off = workloads["signin-limits"]["repeats"], workloads["signin"]["repeats"]
        pairs = [a["reqPerSec"] / b["reqPerSec"] for a, b in zip(on, off) if b["reqPerSec"]]
        print(f"sign-in with the abuse limits on (informative, next to each plain run): "
              f"{workloads['signin-limits']['reqPerSec']:,.1f} req/s against {workloads['signin']['reqPerSec']:,.1f} off; "
              f"per repeat " + " / ".join(f"{x:.2f}" for x in pairs))
    cpu = [(name, w["serverCPUMicrosecondsPerRequest"]) for name, w in workloads.items()
           if any(x is not None for x in w.get("serverCPUMicrosecondsPerRequest", []))]
    if cpu:
        print("server CPU per request (µs, the accountd process's utime + stime over the run / requests, per repeat): "
              + ", ".join(f"{name} " + " / ".join("—" if x is None else f"{x:,.0f}" for x in values) for name, values in cpu))
    pg_cpu = [(name, w["postgresCPUMicrosecondsPerRequest"], pgbench.get(name, {}).get("postgresCPUMicrosecondsPerTransaction"))
              for name, w in workloads.items() if any(x is not None for x in w.get("postgresCPUMicrosecondsPerRequest", []))]
    def values(xs):
        return " / ".join("—" if x is None else f"{x:,.0f}" for x in xs)

    if pg_cpu:
        print("PostgreSQL CPU (µs, the cluster's processes' utime + stime over the run, per repeat), serving the service per "
              "request, and serving pgbench's reference per transaction where it has one: "
              + ", ".join(f"{name} {values(served)}" + (f" (pgbench {values(alone)})" if alone else "")
                          for name, served, alone in pg_cpu))
    pgcost = [(label, pg_reference(f"pgcost-{setting}")) for setting, label in (
        ("full", "full speed"), ("paced", "paced"), ("paced-4", "paced, 4 clients"),
        ("beside-service", "paced beside the service's trivial route"), ("beside-loops", "paced beside two busy loops"))]
    if any(reference for _, reference in pgcost):
        print("PostgreSQL CPU per lookup statement under pgbench (µs, per repeat; pgcost: paced = at the service's lookup "
              "rate): " + ", ".join(f"{label} {values(reference['postgresCPUMicrosecondsPerTransaction'])}"
                                    for label, reference in pgcost if reference))
    if drivers:
        print("PostgresNIO alone (accountd-bench sql, the lookup's statement through the service's store and pool, no "
              "HTTP): " + ", ".join(f"{k} {v['queriesPerSecond']:,.0f} queries/s at {v['clientCPUMicrosecondsPerQuery']:,.0f} "
                                   f"µs client CPU each" for k, v in drivers.items()))
    flood = None
    flood_runs = repeats_of(work, "flood")
    if flood_runs:
        per = [flood_figures(work, r) for r in flood_runs]
        flood = {"repeats": per, "honestConnections": meta["concurrency"].get("honest"),
                 "floodConnections": meta["concurrency"].get("flood")}
        for key in ("honestAloneP99ms", "honestFloodP99ms", "floodReqPerSec", "honestFlood503Share"):
            values = [p[key] for p in per if p[key] is not None]
            flood[key] = median(values) if values else None
        ratios["flood: honest p99 during / alone"] = median(
            p["honestFloodP99ms"] / p["honestAloneP99ms"] for p in per if p["honestAloneP99ms"])
        print(f"flood (informative; limits on, loopback a trusted proxy): honest sign-in p99 {flood['honestAloneP99ms']:.1f} ms "
              f"alone, {flood['honestFloodP99ms']:.1f} ms while {flood['floodConnections']} connections flood "
              f"{flood['floodReqPerSec']:,.0f} req/s of wrong passwords from random addresses (x"
              f"{ratios['flood: honest p99 during / alone']:.1f}, median of {len(per)}); honest requests refused 503 "
              f"during it: {100 * (flood['honestFlood503Share'] or 0):.1f}%")
    for problem in problems:
        print(f"ERROR: {problem}", file=sys.stderr)

    failed = [r for r in rows if r[7] is False]
    results = {
        "meta": meta, "raw": raw, "workloads": workloads, "pgbench": pgbench, "postgresNIO": drivers, "import": seeding, "copy": copy,
        "ratios": ratios, "flood": flood, "combinedBounds": bounds, "memory": memory, "lookupFlatness": flat,
        "checks": [{"workload": r[0], "figure": r[1], "measured": r[2], "reference": r[3], "referenceValue": r[4],
                    "ratio": r[5], "target": r[6], "pass": r[7]} for r in rows],
        "failedTargets": len(failed), "problems": problems,
    }
    with open(os.path.join(meta["root"], "bench-results.json"), "w") as out:
        json.dump(results, out, indent=2)
    print()
    print(f"wrote bench-results.json ({len(failed)} target(s) not met)")
    if problems:
        sys.exit(1)


def check_wrk(path, label):
    """Fails loudly (exit 1) if more than 1% of a wrk run's requests failed; prints a summary line."""
    f = parse_wrk(path)
    bad = f["non2xx"] + f["socketErrors"]
    p50 = "—" if f["p50ms"] is None else f"{f['p50ms']:.2f}"
    p99 = "—" if f["p99ms"] is None else f"{f['p99ms']:.2f}"
    print(f"    {label}: {f['reqPerSec']:,.0f} req/s, p50 {p50} ms, p99 {p99} ms, {bad} failed of {f['requests']}",
          file=sys.stderr)
    if f.get("codesExhausted"):
        sys.exit(f"{label}: ran out of pre-minted codes ({f['codesExhausted']} requests) — raise the margin in scripts/bench")
    if f["requests"] == 0 or bad / f["requests"] > 0.01:
        sys.exit(f"{label}: {bad} of {f['requests']} requests failed (non-2xx or socket errors), more than 1%:\n"
                 + open(path).read())


def variants(work, repeats, prefix, title, labels):
    """Servers compared on lookup and refresh, alternating: median rate, p99 and server CPU of
    each; each repeat's ratio to the first (the baseline) and the median of those ratios.
    `labels` maps each variant's file name part to its label, the baseline first."""
    out = []
    names = list(labels)
    base = names[0]
    for name in ("lookup", "refresh"):
        runs = {v: [parse_wrk(f"{work}/{prefix}-{name}-{v}.{r}.txt") for r in range(1, repeats + 1)] for v in names}
        cpu = {v: [server_cpu_us(f"{work}/{prefix}-{name}-{v}.{r}.proc", x["requests"]) for r, x in enumerate(runs[v], 1)]
               for v in runs}

        def cpu_text(v):
            known = [c for c in cpu[v] if c is not None]
            return f", server CPU {median(known):.0f} µs/request" if known else ""
        line = f"{title} {name}: {labels[base]} {median([x['reqPerSec'] for x in runs[base]]):,.0f} req/s " \
               f"(p99 {median([x['p99ms'] for x in runs[base]]):.2f} ms{cpu_text(base)})"
        for v in names[1:]:
            ratios = [b["reqPerSec"] / a["reqPerSec"] for a, b in zip(runs[base], runs[v]) if a["reqPerSec"]]
            line += f"; {labels[v]} {median([x['reqPerSec'] for x in runs[v]]):,.0f} req/s " \
                    f"(p99 {median([x['p99ms'] for x in runs[v]]):.2f} ms{cpu_text(v)}), /{base} per repeat " \
                    f"{', '.join(f'{x:.3f}' for x in ratios)}, median {median(ratios):.3f}"
        out.append(line)
    return out


def observability(work, repeats):
    """The observability triples: metrics off, metrics on, and metrics on with JSON lines (all
    writing their request lines at info), and the log lines each wrote."""
    out = variants(work, repeats, "obs", "observability",
                   {"off": "off", "metrics": "metrics on", "json": "metrics on + JSON lines"})
    for v in ("off", "metrics", "json"):
        path = f"{work}/accountd-obs-{v}.log"
        out.append(f"observability: the {v} server wrote {sum(1 for _ in open(path))} log lines")
    return "\n".join(out)


def databases(work, repeats):
    """How accountd reaches PostgreSQL: a single-host URL, a multi-host one, PgBouncer."""
    return "\n".join(variants(work, repeats, "db", "databases",
                              {"single": "single host", "multi": "multi-host", "bouncer": "PgBouncer (transaction)"}))


def ab(work, repeats):
    """An A/B of two servers (BENCH_AB_A, BENCH_AB_B)."""
    return "\n".join(variants(work, repeats, "ab", "A/B", {"a": "A", "b": "B"}))


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    command, rest = args[0], args[1:]
    if command == "wait-ready":
        wait_ready(*rest)
    elif command == "idp-setup":
        idp_setup(*rest)
    elif command == "flood-line":
        flood_line(*rest)
    elif command == "seed-signin":
        seed_signin(rest[0], rest[1], int(rest[2]), int(rest[3]) if len(rest) > 3 else 64)
    elif command == "import":
        import_users(rest[0], int(rest[1]), int(rest[2]), int(rest[3]) if len(rest) > 3 else 4)
    elif command == "oobcodes":
        oobcodes(rest[0], int(rest[1]), int(rest[2]), rest[3])
    elif command == "phone-sessions":
        phone_sessions(rest[0], int(rest[1]), rest[2])
    elif command == "mfa-setup":
        mfa_setup(rest[0], int(rest[1]), rest[2])
    elif command == "mfa-users":
        print(mfa_users_needed(rest[0], int(rest[1]), int(rest[2]), int(rest[3])))
    elif command == "mfa-lines":
        mfa_lines(rest[0], int(rest[1]), int(rest[2]), int(rest[3]), int(rest[4]), rest[5], rest[6])
    elif command == "observability":  # DIR REPEATS: the metrics off / on / on + JSON triples
        print(observability(rest[0], int(rest[1])))
    elif command == "ab":  # DIR REPEATS: servers A and B
        print(ab(rest[0], int(rest[1])))
    elif command == "databases":  # DIR REPEATS: single-host, multi-host, PgBouncer
        print(databases(rest[0], int(rest[1])))
    elif command == "check-wrk":
        check_wrk(rest[0], rest[1])
    elif command == "median-rate":  # median req/s of DIR/NAME.<r>.txt
        print(median(parse_wrk(os.path.join(rest[0], f"{rest[1]}.{r}.txt"))["reqPerSec"] for r in repeats_of(rest[0], rest[1])))
    elif command == "max-rate":  # highest req/s of DIR/NAME.<r>.txt
        print(max(parse_wrk(os.path.join(rest[0], f"{rest[1]}.{r}.txt"))["reqPerSec"] for r in repeats_of(rest[0], rest[1])))
    elif command == "median-tps":  # median tps of DIR/pg-NAME.<r>.txt
        print(median(parse_pgbench(os.path.join(rest[0], f"pg-{rest[1]}.{r}.txt"))["tps"]
                     for r in repeats_of(rest[0], f"pg-{rest[1]}")))
    elif command == "median-primitive":  # median of one accountd-bench primitives figure over DIR/primitives.<r>.json
        print(primitives(rest[0])[rest[1]])
    elif command == "report":
        report(rest[0])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
