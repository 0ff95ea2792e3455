"""Every error reply is a ProblemDetails body; no traceback ever reaches a client."""

from __future__ import annotations

import logging
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from server.errors import ReelroomError

log = logging.getLogger("reelroom.http")
MEDIA_TYPE = "application/problem+json; charset=utf-8"
_TITLES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
           409: "Conflict", 429: "Too Many Requests", 413: "Payload Too Large", 502: "Bad Gateway", 504: "Gateway Timeout", 415: "Unsupported Media Type", 416: "Range Not Satisfiable",
           500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable"}


def problem(status: int, detail: str, headers: dict[str, str] | None = None) -> Response[dict[str, object]]:
    body = {"type": "about:blank", "title": _TITLES.get(status, "Error"), "status": status}
    if detail:
        body["detail"] = detail
    return Response(content=body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def handle_reelroom_error(_request: Request[Any, Any, Any], exc: ReelroomError) -> Response[dict[str, object]]:
    retry_after = getattr(exc, "retry_after", None)
    return problem(exc.status_code, exc.detail, {"Retry-After": str(retry_after)} if retry_after else None)


def handle_http_exception(request: Request[Any, Any, Any], exc: HTTPException) -> Response[dict[str, object]]:
    detail = exc.detail or ""
    if isinstance(exc, ValidationException) and isinstance(exc.extra, list):
        parts = []
        for item in exc.extra:
            if isinstance(item, dict):
                key = item.get("key")
                parts.append(f"{key}: {item.get('message')}" if key else str(item.get("message")))
        if parts:
            detail = "Invalid request: " + "; ".join(parts)
    if exc.status_code == 404 and detail == "Not Found":
        detail = f"No such resource: {request.url.path}"
    return problem(exc.status_code, detail, exc.headers)


def handle_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, object]]:
    log.exception("Unhandled error on %s %s", request.method, request.url.path)
    return problem(500, "The server hit an unexpected error; it has been logged.")
