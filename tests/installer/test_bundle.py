"""Smoke test of the built Linux installer: unpack the .deb into a temporary root and run both
bundled programs with fresh data folders.

It tests a .deb built beforehand, never builds one (a cold build takes minutes, more than a
test's timeout on a loaded machine): REELROOM_DEB=path/to/reelroom_x_amd64.deb, else the newest
dist/reelroom_*.deb if it is newer than the sources. Build with `bash installer/linux/build.sh`;
CI (.ci/run) builds first and sets REELROOM_DEB. Without a .deb the tests skip and say so.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.mediagen import make_video

ROOT = Path(__file__).resolve().parents[2]
# Each smoke test starts the frozen programs (cold starts of a PyInstaller bundle): its own
# timeout, generous for a loaded machine, instead of the suite's 300 s.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

AUTH = 'MediaBrowser Client="smoke", Device="smoke", DeviceId="smoke-test", Version="1"'


def _free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _newest_source_change() -> float:
    newest = 0.0
    for folder in ("server", "app", "ui", "resources", "installer"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                newest = max(newest, path.stat().st_mtime)
    return newest


@pytest.fixture(scope="module")
def deb() -> Path:
    given = os.environ.get("REELROOM_DEB")
    if given:
        assert Path(given).is_file(), f"REELROOM_DEB={given} does not exist"
        return Path(given)
    debs = sorted((ROOT / "dist").glob("reelroom_*.deb"), key=lambda p: p.stat().st_mtime)
    if not debs:
        pytest.skip("no installer to smoke-test: build one first (bash installer/linux/build.sh; .ci/run does) "
                    "or set REELROOM_DEB=path/to/reelroom_x_amd64.deb")
    if debs[-1].stat().st_mtime < _newest_source_change():
        pytest.skip(f"{debs[-1].relative_to(ROOT)} is older than the sources: rebuild it "
                    "(bash installer/linux/build.sh) or set REELROOM_DEB")
    return debs[-1]


@pytest.fixture(scope="module")
def installed(deb: Path, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("deb-root")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return root


def test_the_deb_lays_out_what_it_promises(installed: Path):
    assert (installed / "opt/reelroom/reelroom").is_file() and os.access(installed / "opt/reelroom/reelroom", os.X_OK)
    assert (installed / "opt/reelroom/reelroom-server").is_file()
    assert os.readlink(installed / "usr/bin/reelroom-server") == "/opt/reelroom/reelroom-server"
    assert (installed / "usr/share/applications/reelroom.desktop").is_file()
    assert (installed / "usr/share/icons/hicolor/256x256/apps/reelroom.png").is_file()
    assert (installed / "usr/lib/systemd/user/reelroom-server.service").is_file()
    internal = installed / "opt/reelroom/_internal"
    assert (internal / "resources" / "localization").is_dir()
    assert (internal / "server" / "db" / "migrations" / "env.py").is_file()
    assert list((internal / "imageio_ffmpeg" / "binaries").glob("ffmpeg-*"))
    assert not (internal / "tkinter").exists() and not (internal / "_pytest").exists()
    # (test tools a build venv may have: pydantic's plugins for them imported both)
    assert not (internal / "hypothesis").exists() and not (internal / "mypy").exists()
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert (internal / "VERSION").read_text().strip() == pyproject  # the frozen app's version source


def test_the_bundle_carries_its_dataclass_code_and_starts_without_writing_it(installed: Path, tmp_path: Path):
    """The dataclass methods a start compiles, made at build time (installer/inputs.py
    write_code_cache), lie where the frozen server/code_cache.pyc reads them
    (server/__pycache__/ next to it, in the install folder); a start of the bundled server leaves
    the install folder as it was (a frozen app never writes its own folders)."""
    import marshal
    from importlib.util import MAGIC_NUMBER

    internal = installed / "opt/reelroom/_internal"
    assert (internal / "server" / "code_cache.pyc").is_file()
    kept = list((internal / "server" / "__pycache__").glob("dataclass-code.*.bin"))
    assert [p.name for p in kept] == [f"dataclass-code.{sys.implementation.cache_tag}.bin"]
    data = kept[0].read_bytes()
    assert data.startswith(MAGIC_NUMBER)  # the bundled Python's bytecode (the one that built it)
    texts = marshal.loads(data[len(MAGIC_NUMBER) + 1:])
    # the dataclasses' method texts, and the keys of what else a start compiles from text (a head of
    # mode, flags and file name between NULs before the text: typing's forward references,
    # SQLAlchemy's generated functions, namedtuples' __new__; server/code_cache.py caching_compile)
    assert all(isinstance(t, str) for t in texts)
    methods = [t for t in texts if t.startswith("def ")]
    compiled = [t.split("\0", 4) for t in texts if not t.startswith("def ")]
    assert len(methods) > 100, len(methods)
    assert len(compiled) > 100 and all(len(k) == 5 and k[0] == "" and k[1] in ("eval", "exec") for k in compiled)

    def snapshot() -> dict[str, int]:
        return {str(p.relative_to(internal)): p.stat().st_mtime_ns for p in internal.rglob("*")}

    before = snapshot()
    port = _free_port()
    server = subprocess.Popen(
        [str(installed / "opt/reelroom/reelroom-server"), "--data-dir", str(tmp_path / "data"), "--port", str(port),
         "--host", "127.0.0.1", "--no-lan"],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_for(lambda: httpx.get(f"http://127.0.0.1:{port}/System/Info/Public", timeout=1).status_code == 200,
                  server)
        time.sleep(2)  # past settle(): where a source tree saves what its start compiled
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(30)
        output = server.stdout.read().decode("utf-8", "replace")
    assert code == 0, output[-3000:]
    assert snapshot() == before


def test_the_tray_keeps_pythons_import_before_pyside6s_runtime_hook(installed: Path):
    """PyInstaller's PySide6 run-time hook imports QtCore (and with it shiboken's import hook) before
    the entry point; the tray's own run-time hook runs first and imports app.pyside_imports, which
    keeps Python's own import for the hosted server's modules (app/pyside_imports.py). Without it
    the bundle imported the whole server through shiboken's hook (~0.14 G instructions a start)."""
    readers = pytest.importorskip("PyInstaller.archive.readers")
    scripts = [name for name, entry in readers.CArchiveReader(str(installed / "opt/reelroom/reelroom")).toc.items()
               if entry[-1] == "s"]  # the scripts the bootloader runs, in order
    assert "rthook_plain_import" in scripts and "pyi_rth_pyside6" in scripts, scripts
    assert scripts.index("rthook_plain_import") < scripts.index("pyi_rth_pyside6"), scripts
    headless = [name for name, entry in
                readers.CArchiveReader(str(installed / "opt/reelroom/reelroom-server")).toc.items() if entry[-1] == "s"]
    assert "rthook_plain_import" not in headless and "pyi_rth_pyside6" not in headless, headless
    assert (installed / "opt/reelroom/_internal/app/pyside_imports.pyc").is_file()


def test_the_bundle_ships_what_a_start_would_compile_or_read_as_source(installed: Path):
    """shiboken's signature support as files with unchecked bytecode in shiboken6/files.dir (else
    compiled from libshiboken's embedded zip at every start of the tray), and anyio's __init__
    source beside its bytecode (its lazy importer reads it; without it anyio imported all its
    submodules): installer/inputs.py write_shiboken_support, write_package_sources."""
    from importlib.util import cache_from_source

    internal = installed / "opt/reelroom/_internal"
    for source in (internal / "shiboken6/files.dir/shibokensupport/signature/loader.py",
                   internal / "shiboken6/files.dir/shibokensupport/feature.py",
                   internal / "anyio/__init__.py", internal / "anyio/abc/__init__.py"):
        assert source.is_file(), source
        pyc = Path(cache_from_source(str(source))).read_bytes()
        assert int.from_bytes(pyc[4:8], "little") == 0b01, source  # PEP 552 hash-based, unchecked


def test_the_trays_migration_child_loads_no_qt(installed: Path, tmp_path: Path):
    """The server's children started from the tray executable (a migration, a reader) never use Qt:
    PyInstaller's PySide6 run-time hook, which imports QtCore in every process of that executable,
    finds PySide6 not importable in them (installer/rthook_plain_import.py), so they do not load
    Qt (~0.1 s of CPU each, on a first start's path); the tray itself still does. glibc's loader
    names each library it loads (LD_DEBUG=libs)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8", "LD_DEBUG": "libs",
           "REELROOM_MIGRATE_URL": f"sqlite:///{tmp_path / 'migrated.db'}"}
    tray = str(installed / "opt/reelroom/reelroom")
    migrate = subprocess.run([tray, "--reelroom-migrate"], env=env, capture_output=True, text=True, timeout=300)
    assert migrate.returncode == 0, migrate.stderr[-3000:]
    assert (tmp_path / "migrated.db").stat().st_size > 0  # it migrated
    assert "libQt6Core" not in migrate.stderr and "libpython3" in migrate.stderr
    shown = subprocess.run([tray, "--help"], env=env, capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0 and "usage: reelroom" in shown.stdout, shown.stderr[-3000:]
    assert "libQt6Core" in shown.stderr  # the tray program itself still loads Qt (the check can see it)


def test_the_trays_probe_workers_and_resource_tracker_load_no_qt(installed: Path, tmp_path: Path):
    """A scan by the tray program with worker processes (REELROOM_SCAN_PROCESSES=1, a batch of 48+
    files): its probe workers (``--multiprocessing-fork``) and multiprocessing's resource tracker
    (``-c 'from multiprocessing.resource_tracker import main...'``) re-enter the tray executable,
    whose PySide6 run-time hook loaded Qt in each (~0.1 s of CPU, ~9 MiB); they run server code
    only, and now find PySide6 not importable (installer/rthook_plain_import.py,
    app/server_children.py). They probe real files; the tray itself still loads Qt. glibc's loader
    names what each process loads in a file of its own (LD_DEBUG=libs, LD_DEBUG_OUTPUT)."""
    import shutil
    import threading

    library = tmp_path / "Movies"
    made = make_video(tmp_path / "made.mkv", seconds=1, width=160, height=120)
    for n in range(60):
        folder = library / f"Movie {n} (2020)"
        folder.mkdir(parents=True)
        shutil.copy(made, folder / f"Movie {n} (2020).mkv")
    tray_exe = str(installed / "opt/reelroom/reelroom")
    names = (tray_exe, os.path.realpath(tray_exe))  # its argv[0]; multiprocessing's is sys.executable
    port = _free_port()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8",
           "XDG_RUNTIME_DIR": str(tmp_path), "REELROOM_SCAN_PROCESSES": "1",
           "LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(tmp_path / "ld")}
    tray = subprocess.Popen([tray_exe, "--data-dir", str(tmp_path / "data"), "--port", str(port),
                             "--host", "127.0.0.1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen: dict[int, list[str]] = {}  # the processes of the tray executable, by pid: their argv
    watching = threading.Event()

    def watch() -> None:
        while not watching.is_set():
            for proc in Path("/proc").iterdir():
                if proc.name.isdigit() and int(proc.name) not in seen:
                    argv = _cmdline(proc).split("\0")
                    if argv[0] in names:
                        seen[int(proc.name)] = argv[:-1]
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(lambda: httpx.get(f"{url}/System/Ping", timeout=1).status_code == 200, tray)
        with httpx.Client(base_url=url, headers={"Authorization": AUTH}, timeout=60) as c:
            _signed_in_with_movies(c, library)
            items = _wait_for(lambda: [i for i in c.get("/Items", params={
                "recursive": "true", "includeItemTypes": "Movie", "fields": "MediaStreams"}).json()["Items"]
                if i.get("RunTimeTicks") and i.get("MediaStreams")], tray, timeout=300)
            _wait_for(lambda: len(c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}
                                        ).json()["Items"]) == 60, tray, timeout=300)
        assert {s["Type"] for s in items[0]["MediaStreams"]} >= {"Video", "Audio"}  # probed
    finally:
        watching.set()
        watcher.join()
        tray.send_signal(signal.SIGTERM)
        code = tray.wait(60)
        output = tray.stdout.read().decode("utf-8", "replace")
    assert code == 0, output[-3000:]

    def loaded(pid: int) -> str:
        return (tmp_path / f"ld.{pid}").read_text(errors="replace")

    workers = [pid for pid, argv in seen.items() if argv[1:2] == ["--multiprocessing-fork"]]
    trackers = [pid for pid, argv in seen.items()
                if "-c" in argv and "multiprocessing.resource_tracker" in argv[argv.index("-c") + 1]]
    assert workers and trackers, seen
    for pid in workers + trackers:
        assert "libpython3" in loaded(pid), seen[pid]  # the loader's record of that process
        assert "libQt6Core" not in loaded(pid), seen[pid]
    assert "libQt6Core" in loaded(tray.pid)  # the tray program itself still loads Qt (the check can see it)


def test_bundled_web_client(installed: Path, tmp_path: Path):
    """The installed bundle hosts the web app it carries (built with REELROOM_WEB_DIST): /web/index.html
    and a content-hashed asset, and its license notes name jellyfin-web."""
    import re

    internal = installed / "opt/reelroom/_internal"
    notice = (installed / "usr/share/doc/reelroom/copyright").read_text()
    assert "GPL-2.0-or-later" in notice and (internal / "NOTICE.txt").read_text() == notice
    bundled = (internal / "web" / "index.html").is_file()
    port = _free_port()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    server = subprocess.Popen([str(installed / "opt/reelroom/reelroom-server"), "--data-dir", str(tmp_path / "data"),
                               "--port", str(port), "--host", "127.0.0.1", "--no-lan"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(lambda: httpx.get(f"{url}/System/Ping", timeout=1).status_code == 200, server)
        if not bundled:
            assert "Add the web app" in httpx.get(f"{url}/web/").text
            pytest.skip("this bundle was built without REELROOM_WEB_DIST: it shows the page that says how "
                        "to add the web app (checked); set REELROOM_WEB_DIST to bundle jellyfin-web")
        assert "jellyfin-web" in notice
        assert httpx.get(f"{url}/", follow_redirects=False).headers["location"] == "/web/"
        index = httpx.get(f"{url}/web/index.html")
        assert index.status_code == 200 and index.headers["content-type"].startswith("text/html")
        assert index.headers["cache-control"] == "no-cache"
        hashed = re.search(r'href="([0-9a-f]{16,}\.(?:png|json|ico))"', index.text) or \
            re.search(r'href="([\w.-]+\.[0-9a-f]{16,}\.css)', index.text)
        assert hashed, "no content-hashed asset named in index.html"
        asset = httpx.get(f"{url}/web/{hashed.group(1)}")
        assert asset.status_code == 200 and asset.content
        assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert asset.content == (internal / "web" / hashed.group(1)).read_bytes()
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0


def test_frozen_server_selects_its_own_ffmpeg(installed: Path, tmp_path: Path):
    """Even with a system ffmpeg on PATH, the bundle picks the ffmpeg it ships, and that binary runs."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    out = subprocess.run([str(installed / "opt/reelroom/reelroom-server"), "--check-ffmpeg"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    facts = dict(line.split(": ", 1) for line in out.stdout.splitlines())
    assert facts["source"] == "bundled", facts
    ffmpeg = Path(facts["ffmpeg"])
    assert ffmpeg.is_relative_to(installed / "opt/reelroom/_internal") and facts["libx264"] == "yes"
    hls = tmp_path / "hls"
    hls.mkdir()
    subprocess.run([str(ffmpeg), "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=24:duration=2",
                    "-c:v", "libx264", "-f", "hls", "-hls_time", "1", str(hls / "main.m3u8")], check=True, timeout=60)
    assert next(hls.glob("*.ts")).read_bytes()[:1] == b"\x47"


def test_default_data_folder_is_outside_the_install_folder(installed: Path, tmp_path: Path):
    """Without --data-dir the server writes to the platformdirs folder (XDG_DATA_HOME/Reelroom), never /opt."""
    port = _free_port()
    started = time.time()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg"), "LANG": "C.UTF-8"}
    server = subprocess.Popen([str(installed / "opt/reelroom/reelroom-server"), "--port", str(port),
                               "--host", "127.0.0.1", "--no-lan"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_for(lambda: httpx.get(f"http://127.0.0.1:{port}/System/Info/Public", timeout=1).status_code == 200,
                  server)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0
    assert list((tmp_path / "xdg" / "Reelroom").rglob("*.db"))
    written = [p for p in (installed / "opt").rglob("*") if p.lstat().st_mtime >= started]
    assert not written, f"written inside the install folder: {written[:5]}"


def test_bundled_server(installed: Path, tmp_path: Path):
    library = tmp_path / "Movies"
    make_video(library / "Smoke Test (2024)" / "Smoke Test (2024).mkv", seconds=4)
    port, discovery = _free_port(), _free_port(socket.SOCK_DGRAM)
    # No ffmpeg on PATH: the bundled imageio-ffmpeg binary must do the work.
    env = {"PATH": "/nonexistent", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    server = subprocess.Popen(
        [str(installed / "opt/reelroom/reelroom-server"), "--data-dir", str(tmp_path / "data"), "--port", str(port),
         "--host", "127.0.0.1", "--no-zeroconf", "--discovery-port", str(discovery)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(lambda: httpx.get(f"{url}/System/Ping", timeout=1).status_code == 200, server)
        public = httpx.get(f"{url}/System/Info/Public").json()
        assert public["ProductName"] == "Jellyfin Server" and public["Version"] == "10.10.7"
        assert public["StartupWizardCompleted"] is False
        # A first start (the bundle migrated in a child, --reelroom-migrate); the headless server
        # loads no Qt (PySide6 is not in its analysis, installer/reelroom.spec).
        maps = Path(f"/proc/{server.pid}/maps").read_text()
        assert "libQt6Core" not in maps

        # Discovery on 127.0.0.1, as the Jellyfin apps ask.
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(b"who is JellyfinServer?", ("127.0.0.1", discovery))
            reply = json.loads(s.recvfrom(4096)[0])
        assert reply["Id"] == public["Id"] and reply["Address"].startswith("http://")

        with httpx.Client(base_url=url, headers={"Authorization": AUTH}, timeout=60) as c:
            assert c.post("/Startup/Configuration", json={"UICulture": "en-US"}).status_code == 204
            _signed_in_with_movies(c, library)
            items = _wait_for(lambda: c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie"}
                                             ).json()["Items"], server)
            assert items[0]["Name"] == "Smoke Test"
            item_id = items[0]["Id"]

            # An HLS segment, transcoded by the bundled ffmpeg.
            info = c.post(f"/Items/{item_id}/PlaybackInfo", json={"DeviceProfile": {
                "DirectPlayProfiles": [], "TranscodingProfiles": [{
                    "Type": "Video", "Container": "ts", "Protocol": "hls", "VideoCodec": "h264",
                    "AudioCodec": "aac", "Context": "Streaming"}]}}).json()
            transcoding = info["MediaSources"][0].get("TranscodingUrl")
            assert transcoding and "master.m3u8" in transcoding
            master = c.get(transcoding)
            assert master.status_code == 200, master.text
            variant = next(line for line in master.text.splitlines() if line and not line.startswith("#"))
            playlist = c.get(_join(transcoding, variant))
            assert playlist.status_code == 200
            segment_url = next(line for line in playlist.text.splitlines() if line and not line.startswith("#"))
            segment = c.get(_join(_join(transcoding, variant), segment_url), timeout=120)
            assert segment.status_code == 200 and segment.content[:1] == b"\x47" and len(segment.content) > 10_000

    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(30)
        output = server.stdout.read().decode("utf-8", "replace")
    assert code == 0, output[-3000:]
    assert "Traceback" not in output, output[-3000:]


def test_bundled_tray_app_starts_and_stops(installed: Path, tmp_path: Path):
    port = _free_port()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8",
           "XDG_RUNTIME_DIR": str(tmp_path)}
    tray = subprocess.Popen([str(installed / "opt/reelroom/reelroom"), "--data-dir", str(tmp_path / "data"),
                             "--port", str(port), "--host", "127.0.0.1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_for(lambda: httpx.get(f"http://127.0.0.1:{port}/System/Ping", timeout=1).status_code == 200, tray)
    finally:
        tray.send_signal(signal.SIGTERM)
        code = tray.wait(30)
        output = tray.stdout.read().decode("utf-8", "replace")
    assert code == 0, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/System/Ping", timeout=1)
    leftovers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p).find(str(tmp_path)) >= 0]
    assert not leftovers, "a process of the tray app is still running"


def _signed_in_with_movies(c: httpx.Client, library: Path) -> None:
    """The wizard's first user, signed in (the client's token set), and a movie library of
    ``library`` added with a scan asked."""
    assert c.get("/Startup/User").status_code == 200
    assert c.post("/Startup/User", json={"Name": "smoke", "Password": "smoke"}).status_code == 204
    assert c.post("/Startup/Complete").status_code == 204
    token = c.post("/Users/AuthenticateByName", json={"Username": "smoke", "Pw": "smoke"}).json()["AccessToken"]
    c.headers["Authorization"] = AUTH + f', Token="{token}"'
    assert c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(library)]}).status_code == 204
    assert c.post("/Library/VirtualFolders", params={"name": "Movies", "collectionType": "movies",
                                                     "paths": str(library), "refreshLibrary": "true"}
                  ).status_code == 204


def _cmdline(proc_dir: Path) -> str:
    try:
        if (proc_dir / "stat").read_text().split()[2] == "Z":
            return ""
        return (proc_dir / "cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def _join(base: str, relative: str) -> str:
    if relative.startswith(("http://", "https://", "/")):
        return relative
    path, _, _ = base.partition("?")
    return path.rsplit("/", 1)[0] + "/" + relative


def _wait_for(check, proc: subprocess.Popen, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the program exited ({proc.returncode}): "
                                 f"{proc.stdout.read().decode('utf-8', 'replace')[-3000:]}")
        try:
            value = check()
            if value:
                return value
        except (httpx.HTTPError, KeyError, IndexError, ValueError):
            pass
        time.sleep(0.3)
    raise AssertionError("timed out")
