"""The MediaBrowser authorization header, as Jellyfin's own tests parse it."""

from __future__ import annotations

from server.auth.header import identify, parse_authorization, split_auth_parts


def test_comma_inside_quotes_is_not_a_separator():
    assert split_auth_parts('x="123,123", y="123"') == ['x="123,123"', 'y="123"']


def test_unquoted_values_work():
    assert parse_authorization("MediaBrowser Client=Kodi, Token=abc") == {"Client": "Kodi", "Token": "abc"}


def test_values_are_url_decoded_and_any_key_order():
    parsed = parse_authorization('MediaBrowser Device="Apple%20II", Client="Jellyfin.Server%20Integration%20Tests", '
                                 'DeviceId="69420", Version="10.8.0"')
    assert parsed == {"Device": "Apple II", "Client": "Jellyfin.Server Integration Tests", "DeviceId": "69420",
                      "Version": "10.8.0"}


def test_emby_scheme_is_accepted_and_others_ignored():
    assert parse_authorization('Emby Token="t"') == {"Token": "t"}
    assert parse_authorization('Bearer abc') is None
    assert parse_authorization(None) is None


def test_empty_token_before_login_means_no_token():
    assert identify({"authorization": 'MediaBrowser Client="c", Token=""'}, {}).token is None


def test_token_sources_in_jellyfins_order():
    headers = {"x-emby-authorization": 'MediaBrowser Token="header"', "x-emby-token": "emby",
               "x-mediabrowser-token": "mb"}
    query = {"apikey": "apikey", "api_key": "api_key"}
    assert identify(headers, query).token == "header"
    headers.pop("x-emby-authorization")
    assert identify(headers, query).token == "emby"
    headers.pop("x-emby-token")
    assert identify(headers, query).token == "mb"
    assert identify({}, query).token == "apikey"
    assert identify({}, {"api_key": "api_key"}).token == "api_key"


def test_x_emby_authorization_is_read_before_authorization():
    ident = identify({"x-emby-authorization": 'MediaBrowser DeviceId="a"', "authorization": 'MediaBrowser DeviceId="b"'},
                     {})
    assert ident.device_id == "a"


def _old_guard_token(headers: list[tuple[bytes, bytes]], query: bytes) -> str | None:
    """The token as the guard found it before ``request_token``: every header and query key
    lowered into a map (a repeated one counts by its last value), then ``identify``."""
    from urllib.parse import parse_qsl

    header_map = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
    query_map = {k.lower(): v for k, v in parse_qsl(query.decode("latin-1"), keep_blank_values=True)}
    return identify(header_map, query_map).token


def test_the_guard_reads_the_token_from_the_scope_as_identify_does():
    import itertools
    import random

    from server.api import base

    values = {
        b"x-emby-authorization": [b'MediaBrowser Token="xe"', b'MediaBrowser Client="c"', b"MediaBrowser ",
                                  b'Bearer Token="no"', b'Emby Token="xe2", Client="c"'],
        b"authorization": [b'MediaBrowser Client="c", Token="au"', b'MediaBrowser Token=""', b"Basic abc",
                           b'MediaBrowser Client="a,b", Token="q%20r"'],
        b"x-emby-token": [b"et", b""],
        b"x-mediabrowser-token": [b"mt", b""],
        b"Authorization": [b'MediaBrowser Token="upper"'],
    }
    queries = [b"", b"ApiKey=k1", b"api_key=k2", b"APIKEY=&api_key=k3", b"api_key=k4&apikey=k5",
               b"%61pi_key=k6", b"x=1&ApiKey=k7&ApiKey=k8", b"userId=1&limit=2"]
    rnd = random.Random(13)
    names = list(values)
    cases = 0
    for size in range(4):
        for chosen in itertools.combinations(names, size):
            for _ in range(6):
                headers = [(name, rnd.choice(values[name])) for name in chosen]
                if headers and rnd.random() < 0.3:  # a header sent twice: the last one counts
                    headers.append((headers[0][0], rnd.choice(values[headers[0][0]])))
                headers.append((b"accept", b"application/json"))
                for query in queries:
                    scope = {"headers": headers, "query_string": query}
                    assert base.request_token(scope) == _old_guard_token(headers, query), (headers, query)
                    assert base.request_token(scope) == _old_guard_token(headers, query)  # from the parse cache
                    cases += 1
    assert cases > 1000
