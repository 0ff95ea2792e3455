"""Spec operations Reelroom does not implement yet: the one list of them.

Each answers 501 with a ProblemDetails body (after the same authorization as a real handler),
so no path of the spec is ever a 404. Implementing an operation means removing its line here;
tests/api/test_contract.py checks that every spec operation is either handled or listed."""

from __future__ import annotations

from litestar.handlers import BaseRouteHandler

from server.api.base import operation
from server.errors import NotImplementedYetError

NOT_IMPLEMENTED: frozenset[str] = frozenset()


def _stub(operation_id: str) -> BaseRouteHandler:
    async def not_implemented() -> None:
        raise NotImplementedYetError(f"{operation_id} is not implemented in Reelroom yet.")

    not_implemented.__name__ = f"not_implemented_{operation_id}"
    return operation(operation_id)(not_implemented)


def stub_handlers(missing: set[str]) -> list[BaseRouteHandler]:
    """501 handlers for the listed operations that have no real handler."""
    return [_stub(op) for op in sorted(missing & NOT_IMPLEMENTED)]
