"""Builds small plugin wheels in tests (a wheel is a zip with a .dist-info folder) and serves a
plugin repository manifest and its wheels from 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile

from tests.metadata.fakes import FakeService, json_reply


def make_wheel(dist: str, version: str, files: dict[str, bytes | str], entry_points: str | None,
               pure: bool = True, extra_members: dict[str, bytes] | None = None) -> bytes:
    """A wheel of ``files`` (path -> content) declaring ``entry_points`` (entry_points.txt text)."""
    info = f"{dist}-{version}.dist-info"
    members: dict[str, bytes] = {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
    members[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
                                   f"Summary: A test plugin\n").encode()
    members[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: reelroom-tests\n"
                                f"Root-Is-Purelib: {'true' if pure else 'false'}\nTag: py3-none-any\n").encode()
    if entry_points is not None:
        members[f"{info}/entry_points.txt"] = entry_points.encode()
    members.update(extra_members or {})
    record = []
    for name, content in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(content)}")
    record.append(f"{info}/RECORD,,")
    members[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buf.getvalue()


class FakeRepository(FakeService):
    """``/manifest.json`` in Jellyfin's manifest shape, and the wheels it points at."""

    def __init__(self) -> None:
        super().__init__()
        self.packages: list[dict] = []
        self.routes["/manifest.json"] = lambda p, q: json_reply(self.packages)
        self.prefixes["/wheels/"] = self._wheel
        self.wheels: dict[str, bytes] = {}

    def add(self, name: str, guid: str, version: str, wheel: bytes, checksum: str | None = None,
            description: str = "A test plugin") -> dict:
        file = f"{name.replace(' ', '_')}-{version}-py3-none-any.whl"
        self.wheels[file] = wheel
        package = {"guid": guid, "name": name, "description": description, "overview": "For tests.",
                   "owner": "tests", "category": "General", "imageUrl": None,
                   "versions": [{"version": version, "changelog": "first", "targetAbi": "10.10.0.0",
                                 "sourceUrl": f"{self.url}/wheels/{file}",
                                 "checksum": checksum or hashlib.sha256(wheel).hexdigest(),
                                 "timestamp": "2026-11-25T00:00:00Z"}]}
        self.packages.append(package)
        return package

    def _wheel(self, path: str, query: dict) -> tuple[int, bytes, str]:
        content = self.wheels.get(path.rsplit("/", 1)[-1])
        if content is None:
            return 404, b"", "text/plain"
        return 200, content, "application/octet-stream"

    def manifest(self) -> str:
        return json.dumps(self.packages)
