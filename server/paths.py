"""Where the server keeps its files: everything lives under one data directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "Reelroom"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True, slots=True)
class ServerPaths:
    data_dir: Path

    @property
    def config_dir(self) -> Path:
        return self.data_dir / "config"

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "log"

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "cache"

    @property
    def metadata_dir(self) -> Path:
        return self.data_dir / "metadata"

    @property
    def transcode_dir(self) -> Path:
        return self.cache_dir / "transcodes"

    @property
    def image_cache_dir(self) -> Path:
        return self.cache_dir / "images"

    @property
    def branding_dir(self) -> Path:
        return self.config_dir / "branding"

    @property
    def database_file(self) -> Path:
        return self.data_dir / "data" / "reelroom.db"

    @property
    def system_id_file(self) -> Path:
        return self.data_dir / "device.txt"

    def ensure(self) -> None:
        for d in (self.data_dir, self.config_dir, self.log_dir, self.cache_dir, self.metadata_dir,
                  self.transcode_dir, self.image_cache_dir, self.database_file.parent):
            d.mkdir(parents=True, exist_ok=True)
