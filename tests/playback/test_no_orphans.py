"""No orphaned ffmpeg: a real server process starts an HLS transcode and is killed with
SIGKILL; its ffmpeg must die with it (PR_SET_PDEATHSIG, server/media/spawn.py). A new server
on the same data folder clears the transcode folder (Linux)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urljoin

import httpx
import msgspec
import pytest

from tests.conftest import auth_header
from tests.mediagen import make_video
from tests.playback.device_profiles import restrictive_tv_profile

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and PR_SET_PDEATHSIG")
ROOT = Path(__file__).resolve().parents[2]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(data: Path) -> tuple[subprocess.Popen, str]:
    port = _port()
    proc = subprocess.Popen([sys.executable, "-m", "app.server_main", "--data-dir", str(data), "--port", str(port),
                             "--host", "127.0.0.1", "--no-lan"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/System/Info/Public", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        assert proc.poll() is None, "the server exited"
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not start")


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``, from /proc (PPid chains)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                m = re.search(r"^PPid:\s+(\d+)", (entry / "status").read_text(), re.M)
            except OSError:
                continue
            if m:
                parents[int(entry.name)] = int(m.group(1))
    found, frontier = [], {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier}
        found += frontier
    return found


def _is_ffmpeg(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return False
    return b"ffmpeg" in os.path.basename(argv0) and "State:\tZ" not in status


def _sign_in_and_scan(url: str, media: Path) -> tuple[str, str, str]:
    with httpx.Client(base_url=url, headers=auth_header(), timeout=60) as c:
        c.post("/Startup/Configuration", json={"UICulture": "en-US", "MetadataCountryCode": "US",
                                               "PreferredMetadataLanguage": "en"}).raise_for_status()
        c.get("/Startup/User").raise_for_status()
        c.post("/Startup/User", json={"Name": "admin", "Password": "pw"}).raise_for_status()
        c.post("/Startup/Complete").raise_for_status()
        r = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "pw"})
        token, user = r.json()["AccessToken"], r.json()["User"]["Id"]
    with httpx.Client(base_url=url, headers=auth_header(token), timeout=60) as c:
        fs = c.get("/System/Configuration/filesystem").json() or {}
        c.post("/System/Configuration/filesystem",
               json={**fs, "AllowedRoots": [*(fs.get("AllowedRoots") or []), str(media)]})  # locked-down installs
        r = c.post("/Library/VirtualFolders", params={"name": "Movies", "collectionType": "movies",
                                                       "paths": [str(media)], "refreshLibrary": "true"})
        assert r.status_code == 204, r.text
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            found = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}).json()["Items"]
            if found:
                return token, user, found[0]["Id"]
            time.sleep(0.2)
    raise AssertionError("the movie was not scanned")


def test_kill_9_of_the_server_leaves_no_ffmpeg(tmp_path):
    media = tmp_path / "media"
    make_video(media / "Long Clip (1990)" / "Long Clip (1990).mkv", seconds=60, vcodec="mpeg4")
    data = tmp_path / "data"
    proc, url = _start(data)
    try:
        token, user, item = _sign_in_and_scan(url, media)
        with httpx.Client(base_url=url, headers=auth_header(token), timeout=60) as c:
            r = c.post(f"/Items/{item}/PlaybackInfo", params={"userId": user},
                       json={"DeviceProfile": msgspec.to_builtins(restrictive_tv_profile())})
            master = r.json()["MediaSources"][0]["TranscodingUrl"]
            master_abs = urljoin(url, master)
            text = c.get(master_abs).text
            main_abs = urljoin(master_abs, [x for x in text.splitlines() if x and not x.startswith("#")][0])
            main = c.get(main_abs).text
            first = urljoin(main_abs, [x for x in main.splitlines() if x and not x.startswith("#")][0])
            assert c.get(first).status_code == 200  # ffmpeg is running now
        ffmpegs = [p for p in _descendants(proc.pid) if _is_ffmpeg(p)]
        assert ffmpegs, "no ffmpeg was started"
        transcodes = data / "cache" / "transcodes"
        assert list(transcodes.glob("ffmpeg-*.pid"))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while any(_is_ffmpeg(p) for p in ffmpegs) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_is_ffmpeg(p) for p in ffmpegs), "ffmpeg outlived the killed server"
        assert list(transcodes.glob("job-*")), "the killed server left its job folder (expected)"
        proc, url = _start(data)  # the next start clears what the killed one left
        assert list(transcodes.glob("job-*")) == [] and list(transcodes.glob("ffmpeg-*.pid")) == []
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
