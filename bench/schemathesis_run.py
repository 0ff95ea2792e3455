"""Fuzz every operation of the Jellyfin 10.10.7 spec against a real Reelroom server with
schemathesis, and print the counts.

    python bench/schemathesis_run.py [--max-examples N] [--spec PATH] [--phases examples,coverage,fuzzing]

A headless server (``reelroom-server``, its own process, 127.0.0.1, a fresh data folder) is
started, its startup wizard completed and an administrator signed in; schemathesis then calls
every operation except restart, shutdown, signing out (which would end the run) and one that
needs the internet with the
administrator's token, checking ``not_a_server_error`` and ``response_schema_conformance``.
Known faults of the spec itself are listed in docs/spec-deviations.md (tests/api/test_schemathesis.py
accepts a mismatch only on an operation listed there).

Prints the operations tested, test cases, server errors (5xx) and schema mismatches (by
operation), and exits 1 if any server error was seen.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import start_server, stop_server  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def find_spec() -> Path | None:
    """The shared Jellyfin spec: $REELROOM_JELLYFIN_SPEC, else ``shared/jellyfin`` beside the
    checkout or one level further up (worktrees)."""
    env = os.environ.get("REELROOM_JELLYFIN_SPEC")
    if env:
        return Path(env)
    for base in (ROOT.parent, ROOT.parent.parent):
        candidate = base / "shared" / "jellyfin" / "openapi-10.10.7.json"
        if candidate.exists():
            return candidate
    return None


SPEC = find_spec()
# Restart and shutdown would end the run, and so would signing the fuzzer's own session out.
# Schedules Direct's country list is fetched from the online service: without internet it is
# 503 by design (docs/spec-deviations.md).
EXCLUDED = ("RestartApplication", "ShutdownApplication", "ReportSessionEnded", "GetSchedulesDirectCountries")
AUTH = 'MediaBrowser Client="Schemathesis", Device="fuzz", DeviceId="fuzz-1", Version="1.0"'

# Operations whose replies cannot match the 10.10.7 document because the document is wrong
# (docs/spec-deviations.md says why for each). Their mismatches are counted apart.





def sign_in(url: str) -> str:
    with httpx.Client(base_url=url, headers={"Authorization": AUTH}, timeout=30) as c:
        c.post("/Startup/Configuration", json={"UICulture": "en-US", "MetadataCountryCode": "US",
                                               "PreferredMetadataLanguage": "en"}).raise_for_status()
        c.get("/Startup/User").raise_for_status()
        c.post("/Startup/User", json={"Name": "admin", "Password": "fuzz-pass"}).raise_for_status()
        c.post("/Startup/Complete").raise_for_status()
        r = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "fuzz-pass"})
        r.raise_for_status()
        return r.json()["AccessToken"]


def run(max_examples: int, spec: Path, phases: str, workers: int, seed: int, max_time: int | None) -> dict:
    work = Path(tempfile.mkdtemp(prefix="reelroom-st-"))
    proc, url = start_server(work / "data", "--log-level", "WARNING")
    try:
        token = sign_in(url)
        report = work / "report.ndjson"
        cmd = [str(Path(sys.executable).with_name("st")), "run", str(spec), "--url", url,
               "--checks", "not_a_server_error,response_schema_conformance",
               "--max-examples", str(max_examples), "--phases", phases, "--workers", str(workers),
               "--seed", str(seed), "--no-shrink", "--request-timeout", "60", "--continue-on-failure",
               "--suppress-health-check", "all", "--warnings", "off",
               "-H", f"Authorization: {AUTH}, Token=\"{token}\"",
               "--report", "ndjson", "--report-ndjson-path", str(report)]
        if max_time:
            cmd += ["--max-time", str(max_time)]
        for op_id in EXCLUDED:
            cmd += ["--exclude-operation-id", op_id]
        started = time.monotonic()
        # Run in the work folder: st keeps a crash cache (.schemathesis/) in its current folder.
        done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, cwd=work)
        elapsed = time.monotonic() - started
        result = summarize(report, done.stdout)
        result["seconds"] = round(elapsed, 1)
        result["server_alive"] = proc.poll() is None
        log_text = "".join(p.read_text(errors="replace") for p in (work / "data" / "log").glob("*"))
        result["tracebacks_logged"] = log_text.count("Traceback")
        result["stdout_tail"] = done.stdout[-6000:]
        return result
    finally:
        stop_server(proc)


def summarize(report: Path, stdout: str) -> dict:
    """Counts from schemathesis's NDJSON event stream."""
    operations: set[str] = set()
    cases = 0
    failures: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], str] = {}
    if report.exists():
        for line in report.read_text().splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            finished = event.get("ScenarioFinished")
            if not finished:
                continue
            recorder = finished.get("recorder") or {}
            label = recorder.get("label") or ""
            operations.add(label)
            cases += len(recorder.get("cases") or {})
            for check_list in (recorder.get("checks") or {}).values():
                for check in check_list:
                    if str(check.get("status", "")).lower() != "failure":
                        continue
                    key = (label, check.get("name", "?"))
                    failures[key] += 1
                    failure = check.get("failure_info") or {}
                    info = failure.get("failure") or {}
                    examples.setdefault(key, (info.get("title") or "") + ": " + str(info.get("message") or "")[:300])
    from server.api.not_implemented import NOT_IMPLEMENTED
    from server.wire.operations import OPERATIONS

    listed = {f"{op.method} {op.path}" for op in OPERATIONS if op.operation_id in NOT_IMPLEMENTED}
    all_errors = {k: v for k, v in failures.items() if k[1] == "not_a_server_error"}
    server_errors = {k: v for k, v in all_errors.items() if k[0] not in listed}
    not_implemented = {k: v for k, v in all_errors.items() if k[0] in listed}
    mismatches = {k: v for k, v in failures.items() if k[1] == "response_schema_conformance"}
    return {
        "operations": len(operations),
        "cases": cases,
        "server_errors": sum(server_errors.values()),
        "server_error_operations": sorted(k[0] for k in server_errors),
        "not_implemented_501": sorted(k[0] for k in not_implemented),
        "schema_mismatch_operations": sorted(k[0] for k in mismatches),
        "examples": {f"{k[0]} [{k[1]}]": v for k, v in examples.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=10)
    parser.add_argument("--spec", type=Path, default=SPEC or Path("openapi-10.10.7.json"))
    parser.add_argument("--phases", default="examples,coverage,fuzzing")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-time", type=int, default=None)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if not args.spec.exists():
        print(f"The Jellyfin spec is not at {args.spec} (pass --spec)")
        return 2
    result = run(args.max_examples, args.spec, args.phases, args.workers, args.seed, args.max_time)
    print(f"operations tested:      {result['operations']}")
    print(f"test cases:             {result['cases']}")
    print(f"seconds:                {result['seconds']}")
    print(f"server errors (5xx):    {result['server_errors']} {result['server_error_operations']}")
    print(f"501 from operations listed as not implemented: {result['not_implemented_501']}")
    print(f"schema mismatches:      {len(result['schema_mismatch_operations'])} operations")
    for label in result["schema_mismatch_operations"]:
        print(f"    {label}")
    print(f"tracebacks in the log:  {result['tracebacks_logged']}")
    print(f"server still running:   {result['server_alive']}")
    if args.verbose:
        for key, text in result["examples"].items():
            print(f"  {key}: {text}")
        print(result["stdout_tail"])
    return 1 if result["server_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
