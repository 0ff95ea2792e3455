"""What a Reelroom plugin is.

A plugin is a Python object found through the ``reelroom.plugins`` entry-point group (or, for
the built-in providers, registered by the server itself). It has an id (a GUID), a name, a
version, a description, a configuration model and, through the plugin manager, an enabled flag.
It may offer providers: objects with a ``name`` and a ``provider_kinds`` set drawn from
``metadata``, ``image``, ``subtitles``, ``lyrics`` and ``listings``.

A plugin package looks like this (the README has the complete example)::

    class Settings(msgspec.Struct):
        Greeting: str = "hello"

    class HelloPlugin(Plugin):
        id = "6f1b0c4e5a7d4b8e9c2d3e4f5a6b7c8d"
        name = "Hello"
        version = "1.0.0"
        config_model = Settings

        def providers(self, host):
            return [HelloLyrics(host.settings)]

and declares ``[project.entry-points."reelroom.plugins"] hello = "hello_plugin:HelloPlugin"``.
"""

from __future__ import annotations

import importlib.resources
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from server.errors import BadRequestError

PROVIDER_KINDS = ("metadata", "image", "subtitles", "lyrics", "listings")


@dataclass(frozen=True)
class ConfigPage:
    """A page of the dashboard's plugin settings, shipped in the plugin's package."""

    name: str  # unique; jellyfin-web asks for /web/ConfigurationPage?name=<name>
    resource: str  # a file of the plugin's package, e.g. "web/config.html"
    display_name: str | None = None
    enable_in_main_menu: bool = False
    menu_section: str | None = None
    menu_icon: str | None = None


@dataclass
class PluginHost:
    """What the server hands a plugin when it asks for its providers."""

    settings: Callable[[], dict[str, Any]]  # the plugin's current configuration
    data_dir: Path  # a folder of its own for caches and state
    server_version: str


class Plugin:
    id: str = ""
    name: str = ""
    version: str = "1.0.0"
    description: str = ""
    config_model: type[msgspec.Struct] | None = None
    config_section: str | None = None  # built-ins keep their configuration in a named section
    config_pages: tuple[ConfigPage, ...] = ()
    image: str | None = None  # a PNG or JPEG of the package
    min_server_version: str | None = None
    builtin: bool = False

    def default_config(self) -> dict[str, Any]:
        if self.config_model is None:
            return {}
        return msgspec.to_builtins(msgspec.convert({}, type=self.config_model))

    def validate_config(self, data: Any) -> dict[str, Any]:
        """The configuration ``data`` (a JSON object) checked against the model: the complete
        configuration, or BadRequestError naming what is wrong."""
        if not isinstance(data, dict):
            raise BadRequestError(f"The configuration of {self.name} must be a JSON object.")
        if self.config_model is None:
            return dict(data)
        fields = {f.lower(): f for f in self.config_model.__struct_fields__}
        spelled = {fields.get(str(k).lower(), str(k)): v for k, v in data.items()}
        try:
            value = msgspec.convert(spelled, type=self.config_model, strict=False)
        except msgspec.ValidationError as exc:
            raise BadRequestError(f"The configuration of {self.name} is not valid: {exc}") from None
        return msgspec.to_builtins(value)

    def providers(self, host: PluginHost) -> list[Any]:
        return []

    def resource(self, relative: str) -> bytes | None:
        """A file shipped in the plugin's package (config pages, image), or None."""
        module = sys.modules.get(type(self).__module__)
        package = (getattr(module, "__package__", None) or type(self).__module__) if module else type(self).__module__
        try:
            ref = importlib.resources.files(package)
            for part in relative.replace("\\", "/").split("/"):
                if part in ("", ".", ".."):
                    return None
                ref = ref.joinpath(part)
            return ref.read_bytes() if ref.is_file() else None
        except (ModuleNotFoundError, OSError, TypeError):
            return None
