"""The web client's configuration section: ``web`` (``{"HostWebClient": true}``: whether the server
hosts the web client at ``/web/``). Registered on the ConfigurationStore by ``server/context.py``."""

from __future__ import annotations

from typing import Any

from server.errors import BadRequestError
from server.system.configuration import ConfigSection


def validate_web_settings(data: dict[str, Any]) -> dict[str, Any]:
    host = data.get("HostWebClient", True)
    if not isinstance(host, bool):
        raise BadRequestError("HostWebClient must be true or false.")
    return {"HostWebClient": host}


SECTIONS = (ConfigSection("web", lambda _paths: {"HostWebClient": True}, validate=validate_web_settings),)
