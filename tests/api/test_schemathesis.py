"""A bounded schemathesis run over every operation of the Jellyfin 10.10.7 spec (except restart,
shutdown and signing out) against a real server in its own process: no server errors, and every
response-schema mismatch is one that docs/spec-deviations.md explains. ``bench/schemathesis_run.py``
does the longer run and prints the counts."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("schemathesis", reason="schemathesis is in the test extra")


def _bench():
    spec = importlib.util.spec_from_file_location("schemathesis_run", ROOT / "bench" / "schemathesis_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documented_deviations() -> set[str]:
    text = (ROOT / "docs" / "spec-deviations.md").read_text(encoding="utf-8")
    text = text.split("## The document is wrong", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `((?:GET|POST|PUT|DELETE|HEAD|PATCH) [^`]+)`", text, re.M))


@pytest.mark.fuzz
@pytest.mark.timeout(900)
def test_schemathesis_finds_no_server_error_and_only_documented_mismatches() -> None:
    bench = _bench()
    if bench.SPEC is None:
        pytest.skip("the shared Jellyfin spec (shared/jellyfin/openapi-10.10.7.json) is not beside this checkout")
    result = bench.run(max_examples=2, spec=bench.SPEC, phases="fuzzing", workers=2, seed=11, max_time=None)
    assert result["operations"] >= 370, result["stdout_tail"]
    assert result["server_errors"] == 0, (result["server_error_operations"], result["examples"])
    assert result["tracebacks_logged"] == 0
    assert result["server_alive"]
    undocumented = set(result["schema_mismatch_operations"]) - _documented_deviations()
    assert not undocumented, (undocumented, result["examples"])
