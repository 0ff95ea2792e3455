"""The shortcuts a handed Items page takes in the owner give what the long way gives: a blank
``ItemQuery`` (server/library/catalog/query.py) is ``ItemQuery()``; an integer parameter's
``key=digits`` part (WireMiddleware's ``_plain_int_part``) is tidied as ``_tidy_query`` tidies it."""

from __future__ import annotations

import random
from urllib.parse import parse_qsl

from server.http import wire_middleware as wm
from server.library.catalog.query import ItemQuery, blank_query
from server.wire.operations import BY_ID


def test_a_blank_query_is_a_new_query() -> None:
    a, b = blank_query(), blank_query()
    assert a == ItemQuery() and type(a) is ItemQuery
    assert tuple(vars(a)) == tuple(vars(ItemQuery()))  # field order: what ``__reduce__`` relies on
    for name, value in vars(ItemQuery()).items():
        assert type(vars(a)[name]) is type(value), name
        if isinstance(value, (list, set, dict)):
            assert vars(a)[name] is not vars(b)[name], name  # a fresh one each, as the factories make
    a.include_types.append("Movie")
    assert b.include_types == [] and blank_query().include_types == []


def _slow(info: wm.RouteInfo, part: str) -> tuple[str, str | None, tuple[str, ...]]:
    pairs, problem = wm._tidy_query(parse_qsl(part, keep_blank_values=True), info)
    listed = tuple(name for name, _ in pairs
                   if (found := info.query.get(name.lower())) is not None and found[1].startswith("array:"))
    return (wm._encode_query(pairs).decode("latin-1") if pairs else "", problem, listed)


def test_an_integer_part_is_tidied_as_the_whole_query_would_be() -> None:
    rng = random.Random(7)
    values = ["0", "1", "007", "123456789", "1234567890", "99999999999", "-1", "1.5", "", " 1", "1 ", "\xb2",
              "12\xb3", "%31", "+1", "1e3", "abc", "2147483647", "2147483648", "null"]
    taken = 0
    for op_id in ("GetItems", "GetResumeItems", "GetEpisodes", "GetLatestMedia"):
        info = wm._route_info(BY_ID[op_id])
        keys = [*info.query, "StartIndex", "STARTINDEX", "start%49ndex", "start+index", "limit", "x", ""]
        for _ in range(3000):
            key, value = rng.choice(keys), rng.choice(values)
            part = f"{key}={value}" if rng.random() < 0.95 else key
            fast = wm._plain_int_part(info, part)
            if fast is not None:
                taken += 1
                assert fast == _slow(info, part), (op_id, part)
    assert taken > 500  # (the shortcut was taken often enough to be tested)
    items = wm._route_info(BY_ID["GetItems"])
    assert wm._plain_int_part(items, "startindex=120") == ("startIndex=120", None, ())
    assert wm._plain_int_part(items, "startIndex=-1") is None  # (left to the long way)
    assert wm._plain_int_part(items, "parentId=123") is None  # not an integer parameter
