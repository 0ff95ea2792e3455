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
