"""Update notice: read a Jellyfin package-repository style manifest and compare versions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx


class ManifestError(ValueError):
    """The manifest could not be fetched or is not a list of packages."""


@dataclass(frozen=True)
class Release:
    version: str
    changelog: str = ""
    source_url: str | None = None


def version_key(version: str) -> tuple[int, ...]:
    """Numeric parts of a dotted version (``"0.10.2"`` -> ``(0, 10, 2)``); other text is ignored."""
    parts = [int(p) for p in re.findall(r"\d+", version.split("+", 1)[0].split("-", 1)[0])]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def is_newer(candidate: str, current: str) -> bool:
    return version_key(candidate) > version_key(current)


def newest_release(packages: Any, product: str = "Reelroom") -> Release | None:
    """The highest version of ``product`` in a manifest (a JSON list of packages with ``versions``)."""
    if not isinstance(packages, list):
        raise ManifestError("The update manifest is not a list of packages")
    best: Release | None = None
    for package in packages:
        if not isinstance(package, dict) or str(package.get("name", "")).lower() != product.lower():
            continue
        for entry in package.get("versions") or []:
            if not isinstance(entry, dict) or not entry.get("version"):
                continue
            release = Release(str(entry["version"]), str(entry.get("changelog") or ""), entry.get("sourceUrl"))
            if best is None or version_key(release.version) > version_key(best.version):
                best = release
    return best


def available_update(manifest_url: str, current: str, product: str = "Reelroom", timeout: float = 10.0) -> (
    Release | None
):
    """Fetch the manifest (blocking) and return a release newer than ``current``, if any."""
    try:
        response = httpx.get(manifest_url, timeout=timeout, follow_redirects=True)
        response.raise_for_status()
        packages = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ManifestError(f"Could not read the update manifest at {manifest_url}: {exc}") from exc
    release = newest_release(packages, product)
    if release is not None and is_newer(release.version, current):
        return release
    return None
