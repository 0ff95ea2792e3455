"""Every operation of the spec has a route; unimplemented ones are listed in one place and
answer 501; every secured operation answers 401 without a token."""

from __future__ import annotations

import re

import httpx

from server.api.not_implemented import NOT_IMPLEMENTED
from server.app import collect_handlers, implemented_operations
from server.wire.operations import OPERATIONS
from tests.metadata.fakes import closed_port

# Calls that would sign the admin out or stop the server mid-sweep.
DISRUPTIVE = {"ReportSessionEnded", "RestartApplication", "ShutdownApplication", "UpdateUserPassword",
              "UpdateUserPolicy", "UpdateUser", "DeleteDevice", "CompleteWizard"}
SAMPLE = {"uuid": "0123456789abcdef0123456789abcdef", "int32": "1", "int64": "1", "float": "1.5", "str": "x", "enum": "Primary"}


def concrete(op) -> str:
    kinds = {name: kind for name, where, kind, _e, _r in op.params if where == "path"}
    return re.sub(r"\{(\w+)\}", lambda m: SAMPLE.get(kinds.get(m.group(1), "str"), "x"), op.path)


def test_every_operation_is_implemented_or_listed_once():
    implemented = implemented_operations(collect_handlers())
    all_ops = {op.operation_id for op in OPERATIONS}
    assert len(all_ops) == 382
    assert implemented & NOT_IMPLEMENTED == set()
    assert implemented | NOT_IMPLEMENTED == all_ops, sorted(all_ops - implemented - NOT_IMPLEMENTED)


def test_every_secured_operation_needs_a_token_and_stubs_answer_501(server):
    anonymous = httpx.Client(base_url=server.url, timeout=30)
    admin = server.admin()
    # the sweep must not reach the internet: online services point at a port where nothing listens
    closed = f"http://127.0.0.1:{closed_port()}"
    assert admin.post("/System/Configuration/schedulesdirect", json={"BaseUrl": closed}).status_code == 204
    problems = []
    for op in OPERATIONS:
        path = concrete(op)
        if op.requires_auth:
            r = anonymous.request(op.method, path)
            if r.status_code != 401:
                problems.append(f"{op.method} {op.path}: {r.status_code} without a token")
            elif op.method != "HEAD" and not r.headers["content-type"].startswith("application/problem+json"):
                problems.append(f"{op.method} {op.path}: 401 without ProblemDetails")
        if op.operation_id in DISRUPTIVE:
            continue
        if op.operation_id in NOT_IMPLEMENTED:
            r = admin.request(op.method, path)
            if r.status_code != 501 and not (op.requires_auth and r.status_code == 403):
                problems.append(f"{op.method} {op.path}: stub answered {r.status_code}")
            elif r.status_code == 501 and op.method != "HEAD" and r.json().get("status") != 501:
                problems.append(f"{op.method} {op.path}: 501 without ProblemDetails")
        else:
            r = admin.request(op.method, path)
            if r.status_code == 404 and "No such resource" in r.text:
                problems.append(f"{op.method} {op.path}: no route")
            if r.status_code >= 500 and r.status_code != 503:
                problems.append(f"{op.method} {op.path}: {r.status_code} {r.text[:200]}")
    assert problems == []


def test_openapi_document_is_served_from_our_routes(server):
    r = httpx.get(server.url + "/api-docs/openapi.json", timeout=120)  # built on first use
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json; charset=utf-8"
    doc = r.json()
    assert "/System/Info/Public" in doc["paths"]
    assert "/Videos/{itemId}/stream.{container}" in doc["paths"]
    assert not any("~" in p for p in doc["paths"])
