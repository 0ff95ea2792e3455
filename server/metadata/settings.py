"""The named configurations of the built-in providers ("tmdb", "musicbrainz", "tvmaze", "fanart",
"opensubtitles", "lrclib", "schedulesdirect"), and the spec's ``metadata`` and ``xbmcmetadata``
sections: ``SECTIONS``, registered on the ConfigurationStore by ``server/context.py``.

The provider sections are plain JSON objects kept by the ConfigurationStore. TMDb needs an API key of the
user's own: without one the TMDb provider stays disabled and never contacts the network.
"""

from __future__ import annotations

from functools import partial
from typing import Any
from urllib.parse import urlsplit

from server.errors import BadRequestError
from server.system.configuration import ConfigSection
from server.wire import models as w

TMDB_DEFAULTS: dict[str, Any] = {
    "BaseUrl": "https://api.themoviedb.org",
    "ImageBaseUrl": "https://image.tmdb.org/t/p/",
    "ApiKey": "",
    "Enabled": True,
    "TimeoutSeconds": 10.0,
}

MUSICBRAINZ_DEFAULTS: dict[str, Any] = {
    "BaseUrl": "https://musicbrainz.org",
    "CoverArtBaseUrl": "https://coverartarchive.org",
    "Enabled": True,
    "TimeoutSeconds": 10.0,
}

TVMAZE_DEFAULTS: dict[str, Any] = {
    "BaseUrl": "https://api.tvmaze.com",
    "Enabled": True,
    "TimeoutSeconds": 10.0,
}

FANART_DEFAULTS: dict[str, Any] = {
    "BaseUrl": "https://webservice.fanart.tv",
    "ApiKey": "",
    "Enabled": True,
    "TimeoutSeconds": 10.0,
}

OPENSUBTITLES_DEFAULTS: dict[str, Any] = {
    "BaseUrl": "https://api.opensubtitles.com",
    "ApiKey": "",
    "Username": "",
    "Password": "",
    "Enabled": True,
    "TimeoutSeconds": 15.0,
}

LRCLIB_DEFAULTS: dict[str, Any] = {
    "BaseUrl": "https://lrclib.net",
    "Enabled": True,
    "TimeoutSeconds": 10.0,
}

SCHEDULESDIRECT_DEFAULTS: dict[str, Any] = {
    "BaseUrl": "https://json.schedulesdirect.org/20141201",
    "Enabled": True,
    "TimeoutSeconds": 30.0,
}

DEFAULTS: dict[str, dict[str, Any]] = {
    "tmdb": TMDB_DEFAULTS, "musicbrainz": MUSICBRAINZ_DEFAULTS, "tvmaze": TVMAZE_DEFAULTS,
    "fanart": FANART_DEFAULTS, "opensubtitles": OPENSUBTITLES_DEFAULTS, "lrclib": LRCLIB_DEFAULTS,
    "schedulesdirect": SCHEDULESDIRECT_DEFAULTS,
}
_URL_KEYS = ("BaseUrl", "ImageBaseUrl", "CoverArtBaseUrl")
_TEXT_KEYS = ("ApiKey", "Username", "Password")


class ProviderSettingsError(BadRequestError):
    """A provider configuration value is not acceptable."""


def _check_url(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ProviderSettingsError(f"{key} must be a URL string.")
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProviderSettingsError(f"{key} must be an http or https URL, got {value!r}.")
    return value.strip()


def validate_provider_settings(section: str, data: Any) -> dict[str, Any]:
    """The complete, checked settings for ``section`` from a client's JSON object: keys in any
    case, unknown keys dropped, missing keys filled with the defaults."""
    defaults = DEFAULTS[section]
    if not isinstance(data, dict):
        raise ProviderSettingsError(f"The {section} configuration must be a JSON object.")
    spelling = {k.lower(): k for k in defaults}
    out = dict(defaults)
    for key, value in data.items():
        name = spelling.get(str(key).lower())
        if name is None:
            continue
        if name in _URL_KEYS:
            value = _check_url(name, value)
        elif name in _TEXT_KEYS:
            if value is None:
                value = ""
            if not isinstance(value, str):
                raise ProviderSettingsError(f"{name} must be a string.")
            value = value if name == "Password" else value.strip()
        elif name == "Enabled":
            if not isinstance(value, bool):
                raise ProviderSettingsError("Enabled must be true or false.")
        elif name == "TimeoutSeconds":
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0.1 <= value <= 120:
                raise ProviderSettingsError("TimeoutSeconds must be a number between 0.1 and 120.")
            value = float(value)
        out[name] = value
    return out


def provider_settings(stored: Any, section: str) -> dict[str, Any]:
    """Stored settings (possibly partial or hand-edited) completed with the defaults."""
    out = dict(DEFAULTS[section])
    if isinstance(stored, dict):
        try:
            out.update(validate_provider_settings(section, stored))
        except ProviderSettingsError:
            pass  # a hand-edited file with a bad value: fall back to the defaults
    return out


SECRET_KEYS = {"tmdb": ("ApiKey",), "fanart": ("ApiKey",), "opensubtitles": ("ApiKey", "Password")}


def without_secrets(section: str, value: Any) -> Any:
    """``value`` as a non-administrator may see it: API keys left out."""
    secrets = SECRET_KEYS.get(section)
    if not secrets or not isinstance(value, dict):
        return value
    return {k: v for k, v in value.items() if k not in secrets}


def _provider_section(section: str) -> ConfigSection:
    return ConfigSection(section, lambda _paths: dict(DEFAULTS[section]),
                         validate=partial(validate_provider_settings, section),
                         redact=partial(without_secrets, section))


SECTIONS: tuple[ConfigSection, ...] = (
    *(_provider_section(section) for section in DEFAULTS),
    ConfigSection("metadata", lambda _paths: w.MetadataConfiguration(UseFileCreationTimeForDateAdded=True),
                  wire_type=w.MetadataConfiguration),
    ConfigSection("xbmcmetadata", lambda _paths: w.XbmcMetadataOptions(
        UserId=None, ReleaseDateFormat="yyyy-MM-dd", SaveImagePathsInNfo=True, EnablePathSubstitution=True,
        EnableExtraThumbsDuplication=False), wire_type=w.XbmcMetadataOptions),
)
