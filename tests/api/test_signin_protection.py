"""Sign-in cannot stall the server or lock its owner out: argon2 on its own pool, rate limits
(429 + Retry-After), unknown names checked against a dummy hash, timed lockouts, and the
desktop app's API-key sign-in that no lock stops."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from server.auth.throttle import SignInThrottle, TokenBuckets
from server.errors import TooManyRequestsError
from server.users import passwords


def _sign_in(c: httpx.Client, name: str, pw: str) -> httpx.Response:
    return c.post("/Users/AuthenticateByName", json={"Username": name, "Pw": pw})


def test_token_buckets_refill_and_report_the_wait():
    now = [0.0]
    buckets = TokenBuckets(2, 0.5, clock=lambda: now[0])
    assert buckets.take("a") == 0 and buckets.take("a") == 0
    assert buckets.take("a") == pytest.approx(2.0)
    now[0] = 2.0
    assert buckets.take("a") == 0
    assert buckets.take("b") == 0  # keys are independent


def test_throttle_counts_failures_per_address_and_per_user():
    now = [0.0]
    throttle = SignInThrottle(clock=lambda: now[0])
    for _ in range(6):
        throttle.admit("10.0.0.1", "Bob")
        throttle.failed("10.0.0.1", "Bob")
    with pytest.raises(TooManyRequestsError) as err:  # the user's bucket (6) is empty
        throttle.admit("10.0.0.2", "bob")
    assert err.value.retry_after >= 1
    throttle.admit("10.0.0.1", "alice")  # the address still has tokens for another name
    for _ in range(4):
        throttle.failed("10.0.0.1", "alice")
    with pytest.raises(TooManyRequestsError):
        throttle.admit("10.0.0.1", "carol")
    now[0] += 60
    throttle.admit("10.0.0.1", "carol")


def test_password_work_runs_on_its_own_pool():
    import asyncio

    seen = []

    def spy(stored, pw):
        seen.append(threading.current_thread().name)
        return True

    original = passwords.verify_password
    passwords.verify_password = spy
    try:
        assert asyncio.run(passwords.verify_password_async("$argon2id$x", "pw")) is True
    finally:
        passwords.verify_password = original
    assert seen and seen[0].startswith("reelroom-password")


def test_unknown_name_costs_what_a_known_one_costs(server, monkeypatch):
    """A wrong password for a known name and any password for an unknown one each cost one
    argon2 verification and no hashing (before: the unknown name cost a hash plus a
    verification), so the time does not tell which names exist. The work is counted, not
    timed: the times are in bench/signin_flood.py."""
    with server.admin() as c:
        assert c.post("/Users/New", json={"Name": "dora", "Password": "right"}).status_code == 200
    calls: list[str] = []
    real = passwords._hasher

    class Counting:
        def verify(self, stored: str, password: str) -> bool:
            calls.append("verify")
            return real.verify(stored, password)

        def hash(self, password: str) -> str:
            calls.append("hash")
            return real.hash(password)

    with server.client(device="timing") as anon:
        assert _sign_in(anon, "nobody-here", "warm-up").status_code == 401  # the dummy hash made once
        monkeypatch.setattr(passwords, "_hasher", Counting())
        work = {}
        for name in ("dora", "nobody-here", "dora", "nobody-here"):
            calls.clear()
            assert _sign_in(anon, name, "wrong-guess").status_code == 401
            work.setdefault(name, []).append(list(calls))
    assert work == {"dora": [["verify"], ["verify"]], "nobody-here": [["verify"], ["verify"]]}, work


def test_a_flood_of_bad_sign_ins_gets_429_with_retry_after(server):
    # A stopped clock: no token comes back however slowly a loaded machine checks the passwords.
    frozen = SignInThrottle(clock=lambda: 1_000.0)
    server.ctx.signin_throttle.by_address = frozen.by_address
    server.ctx.signin_throttle.by_user = frozen.by_user
    statuses = []
    with server.client(device="flood") as anon:
        for i in range(20):
            r = _sign_in(anon, f"nobody{i}", "x")
            statuses.append(r.status_code)
            if r.status_code == 429:
                assert int(r.headers["Retry-After"]) >= 1
                assert r.headers["content-type"].startswith("application/problem+json")
                break
    assert statuses[-1] == 429 and statuses.count(401) == 10, statuses  # the address's burst of 10


def test_lock_expires_and_grows_and_the_right_password_then_works(server, monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr("server.users.service.time", type("Clock", (), {"time": staticmethod(lambda: now[0])}))
    with server.admin() as c:
        uid = c.post("/Users/New", json={"Name": "erin", "Password": "right"}).json()["Id"]
        assert c.post(f"/Users/{uid}/Policy", json={**c.get(f"/Users/{uid}").json()["Policy"],
                                                     "LoginAttemptsBeforeLockout": 2}).status_code == 204
    with server.client(device="lock") as anon:
        assert _sign_in(anon, "erin", "bad").status_code == 401
        r = _sign_in(anon, "erin", "bad")
        assert r.status_code == 401 and "locked for 1 minute" in r.json()["detail"]
        assert "locked" in _sign_in(anon, "erin", "right").json()["detail"]
        now[0] += 61
        assert "locked" not in _sign_in(anon, "erin", "bad").json()["detail"]  # counting again
        r = _sign_in(anon, "erin", "bad")
        assert "locked for 5 minutes" in r.json()["detail"]  # the second lock lasts longer
        now[0] += 120
        assert "locked" in _sign_in(anon, "erin", "right").json()["detail"]  # still locked
        now[0] += 181
        r = _sign_in(anon, "erin", "right")
        assert r.status_code == 200, r.text
    with server.admin() as c:
        assert c.get(f"/Users/{uid}").json()["Policy"]["InvalidLoginAttemptCount"] == 0
        kinds = [e["Type"] for e in c.get("/System/ActivityLog/Entries").json()["Items"]]
    assert kinds.count("UserLockedOut") == 2


def test_zero_attempts_before_lockout_never_locks(server):
    with server.admin() as c:
        uid = c.post("/Users/New", json={"Name": "finn", "Password": "right"}).json()["Id"]
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        assert c.post(f"/Users/{uid}/Policy", json={**policy, "LoginAttemptsBeforeLockout": 0}).status_code == 204
    with server.client(device="zero") as anon:
        for _ in range(4):
            assert "locked" not in _sign_in(anon, "finn", "bad").json()["detail"]
        assert _sign_in(anon, "finn", "right").status_code == 200


def test_the_desktop_app_is_never_locked_out_nor_rate_limited(server):
    with server.admin() as c:
        assert c.post("/Auth/Keys", params={"app": "Reelroom Desktop"}).status_code == 204
        key = next(k for k in c.get("/Auth/Keys").json()["Items"] if k["AppName"] == "Reelroom Desktop")
    with server.client(device="stranger") as anon:
        for _ in range(12):  # locks the admin and empties this address's bucket
            assert _sign_in(anon, "admin", "guess").status_code in (401, 429)
        assert _sign_in(anon, "admin", "s3cret!").status_code in (401, 429)
    with server.client(key["AccessToken"], device="tray") as tray:
        r = _sign_in(tray, "admin", "s3cret!")
    assert r.status_code == 200, r.text


def test_other_requests_stay_responsive_under_a_sign_in_flood(server):
    """8 clients sign in with the right password (full argon2 checks no rate limit stops) while
    a ninth pings. The loop answers pings while sign-ins are in flight: a ping that began after a
    sign-in was sent comes back before that sign-in's answer. No wall-time bound (the figures
    are in bench/signin_flood.py); the clients' own timeouts only catch a real hang."""
    with server.admin() as c:
        assert c.post("/Users/New", json={"Name": "gina", "Password": "right"}).status_code == 200
    stop_at = time.monotonic() + 4
    outcomes: list[int] = []
    sign_ins: list[tuple[float, float]] = []  # (sent, answered)

    def hammer(n: int) -> None:
        with server.client(device=f"flood-{n}") as c:
            while time.monotonic() < stop_at:
                sent = time.monotonic()
                outcomes.append(_sign_in(c, "gina", "right").status_code)
                sign_ins.append((sent, time.monotonic()))

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    pings: list[tuple[float, float]] = []
    time.sleep(0.5)
    with server.client() as c:
        while time.monotonic() < stop_at:
            sent = time.monotonic()
            assert c.get("/System/Ping").status_code == 200
            pings.append((sent, time.monotonic()))
            time.sleep(0.05)
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert outcomes and set(outcomes) <= {200, 429} and 200 in outcomes
    overtaking = [p for p in pings if any(s0 < p[0] and p[1] < s1 for s0, s1 in sign_ins)]
    assert len(pings) >= 2 and overtaking, (pings[:5], sign_ins[:5])
