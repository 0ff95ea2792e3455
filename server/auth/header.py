"""The MediaBrowser / Emby authorization header and where a token may come from."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote_plus

SCHEMES = ("mediabrowser", "emby")


def split_auth_parts(text: str) -> list[str]:
    """Split on commas that are not inside double quotes (`x="123,123", y="123"` is two parts)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if current:
        parts.append("".join(current))
    return [p for p in (p.strip() for p in parts) if p]


def parse_authorization(value: str | None) -> dict[str, str] | None:
    """`MediaBrowser Client="x", Token="y"` -> {"Client": "x", "Token": "y"}; None when the
    scheme is not MediaBrowser or Emby. Values are unquoted and URL-decoded."""
    if not value:
        return None
    value = value.strip()
    scheme, _, rest = value.partition(" ")
    if scheme.lower() not in SCHEMES:
        return None
    out: dict[str, str] = {}
    for part in split_auth_parts(rest):
        key, sep, val = part.partition("=")
        if not sep:
            continue
        val = val.strip().strip('"')
        out[key.strip()] = unquote_plus(val) if ("%" in val or "+" in val) else val
    return out


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """Who is calling, as the request tells it."""

    token: str | None
    client: str | None
    device: str | None
    device_id: str | None
    version: str | None


def identify(headers: dict[str, str], query: dict[str, str]) -> ClientIdentity:
    """Read the auth parameters: X-Emby-Authorization first, then Authorization; the token from
    Token, X-Emby-Token, X-MediaBrowser-Token, ApiKey, api_key, first found wins.
    ``headers`` and ``query`` keys are lower case."""
    params = parse_authorization(headers.get("x-emby-authorization")) or parse_authorization(
        headers.get("authorization")) or {}
    token = (params.get("Token") or headers.get("x-emby-token") or headers.get("x-mediabrowser-token")
             or query.get("apikey") or query.get("api_key") or None)
    return ClientIdentity(
        token=token or None,
        client=_clip(params.get("Client")),
        device=_clip(params.get("Device")),
        device_id=_clip(params.get("DeviceId")),
        version=_clip(params.get("Version")),
    )


MAX_IDENTITY_CHARS = 256  # client, device name, device id and version are stored with each token


def _clip(value: str | None) -> str | None:
    """The client's own description of itself is kept to a sane length (the request head is
    bounded at 32 KiB, but these are stored with every device)."""
    return value[:MAX_IDENTITY_CHARS] if value and len(value) > MAX_IDENTITY_CHARS else value
