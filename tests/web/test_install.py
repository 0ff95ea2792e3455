"""Installing the web client: tarballs (xz, gz), zip, folders, URLs (a local HTTP server), sha256,
malicious archives, atomic replacement; the CLI and the admin route."""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import subprocess
import sys
import tarfile
import threading
import zipfile
from pathlib import Path

import httpx
import pytest

from server.web.install import WebInstallError, install_web, installed_info
from tests.web.conftest import make_dist

REPO = Path(__file__).resolve().parents[2]


def make_tarball(dist: Path, out: Path, mode: str = "w:xz", prefix: str = "dist") -> Path:
    with tarfile.open(out, mode) as tf:
        tf.add(dist, arcname=prefix)
    return out


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tar_with(out: Path, members: list[tarfile.TarInfo], good: Path | None = None) -> Path:
    with tarfile.open(out, "w:gz") as tf:
        if good is not None:
            tf.add(good, arcname="dist")
        for info in members:
            data = b"evil" if info.isreg() else None
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return out


def test_install_from_tar_xz_with_sha256(tmp_path: Path) -> None:
    tarball = make_tarball(make_dist(tmp_path / "src"), tmp_path / "web.tar.xz")
    data = tmp_path / "data"
    result = install_web(tarball, data, sha(tarball))
    assert result.folder == data / "web"
    assert (data / "web" / "index.html").read_text().count("v1") == 1
    assert (data / "web" / "libraries" / "libarchive.wasm").is_file()
    assert result.files >= 12 and result.sha256 == sha(tarball)
    assert installed_info(data)["Sha256"] == sha(tarball)
    assert not [p for p in data.iterdir() if p.name.startswith(".web")]  # no leftovers


def test_install_from_tar_gz_zip_and_folder(tmp_path: Path) -> None:
    src = make_dist(tmp_path / "src")
    data = tmp_path / "data"
    install_web(make_tarball(src, tmp_path / "web.tar.gz", "w:gz", prefix="jellyfin-web"), data)
    assert (data / "web" / "config.json").is_file()
    archive = tmp_path / "web.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in src.rglob("*"):
            zf.write(path, path.relative_to(src).as_posix())  # index.html at the top
    install_web(archive, data)
    assert (data / "web" / "index.html").is_file()
    install_web(src, data)
    assert sorted(p.name for p in (data / "web").iterdir() if not p.name.startswith(".")) == \
        sorted(p.name for p in src.iterdir())


def test_sha256_mismatch_installs_nothing(tmp_path: Path) -> None:
    tarball = make_tarball(make_dist(tmp_path / "src"), tmp_path / "web.tar.xz")
    data = tmp_path / "data"
    with pytest.raises(WebInstallError, match="sha256 does not match"):
        install_web(tarball, data, "0" * 64)
    assert not (data / "web").exists()
    with pytest.raises(WebInstallError, match="64 hexadecimal"):
        install_web(tarball, data, "abc")


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "hardlink", "device", "fifo", "backslash"])
def test_malicious_tar_members_are_rejected(tmp_path: Path, kind: str) -> None:
    info = tarfile.TarInfo("dist/x")
    if kind == "dotdot":
        info = tarfile.TarInfo("dist/../../escaped.txt")
    elif kind == "absolute":
        info = tarfile.TarInfo(str(tmp_path / "escaped.txt"))
    elif kind == "symlink":
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    elif kind == "hardlink":
        info.type, info.linkname = tarfile.LNKTYPE, "/etc/passwd"
    elif kind == "device":
        info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    elif kind == "fifo":
        info.type = tarfile.FIFOTYPE
    elif kind == "backslash":
        info = tarfile.TarInfo("dist\\..\\..\\escaped.txt")
    data = tmp_path / "data"
    old = make_dist(data / "web", marker="old")  # an installed copy that must survive
    archive = tar_with(tmp_path / "evil.tar.gz", [info], good=make_dist(tmp_path / "src", marker="new"))
    with pytest.raises(WebInstallError, match="nothing was installed"):
        install_web(archive, data)
    assert "old" in (old / "index.html").read_text()
    assert not (tmp_path / "escaped.txt").exists() and not (data.parent / "escaped.txt").exists()
    assert not [p for p in data.iterdir() if p.name.startswith(".web")]


def test_malicious_zip_members_are_rejected(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("index.html", "<html></html>")
        zf.writestr("../escaped.txt", "evil")
    with pytest.raises(WebInstallError, match="outside"):
        install_web(archive, tmp_path / "data")
    link = zipfile.ZipInfo("index2.html")
    link.external_attr = (0o120777 << 16)  # a symlink
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("index.html", "<html></html>")
        zf.writestr(link, "/etc/passwd")
    with pytest.raises(WebInstallError, match="link"):
        install_web(archive, tmp_path / "data")
    assert not (tmp_path / "escaped.txt").exists()


def test_not_a_web_app_and_not_an_archive(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "sub" / "readme.txt").write_text("x")
    with pytest.raises(WebInstallError, match="no index.html"):
        install_web(empty, tmp_path / "data")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(os.urandom(1000))
    with pytest.raises(WebInstallError, match="not a .tar.xz"):
        install_web(junk, tmp_path / "data")
    with pytest.raises(WebInstallError, match="does not exist"):
        install_web(tmp_path / "missing.tar.xz", tmp_path / "data")
    src = make_dist(tmp_path / "linked")
    os.symlink("/etc/passwd", src / "passwd")
    with pytest.raises(WebInstallError, match="link"):
        install_web(src, tmp_path / "data")


def test_failed_replace_keeps_the_old_copy(tmp_path: Path, monkeypatch) -> None:
    """The final rename fails: the old copy is put back, and no staging folder is left."""
    data = tmp_path / "data"
    install_web(make_dist(tmp_path / "one", marker="old"), data)
    real_rename = os.rename
    calls = []

    def failing_rename(src, dst):
        calls.append((Path(src).name, Path(dst).name))
        if Path(dst) == data / "web" and Path(src).name.startswith(".web-new"):
            raise OSError("disk on fire")
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", failing_rename)
    with pytest.raises(WebInstallError, match="disk on fire"):
        install_web(make_dist(tmp_path / "two", marker="new"), data)
    monkeypatch.setattr(os, "rename", real_rename)
    assert "old" in (data / "web" / "index.html").read_text()
    assert sorted(p.name for p in data.iterdir()) == ["web"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def http_folder(tmp_path: Path):
    folder = tmp_path / "served"
    folder.mkdir()
    handler = lambda *a, **k: _Quiet(*a, directory=str(folder), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_install_from_url(tmp_path: Path, http_folder) -> None:
    folder, base = http_folder
    tarball = make_tarball(make_dist(tmp_path / "src"), folder / "web.tar.xz")
    data = tmp_path / "data"
    result = install_web(f"{base}/web.tar.xz", data, sha(tarball))
    assert result.sha256 == sha(tarball) and (data / "web" / "index.html").is_file()
    with pytest.raises(WebInstallError, match="HTTP 404"):
        install_web(f"{base}/missing.tar.xz", tmp_path / "data2")


def test_cli_install_web(tmp_path: Path) -> None:
    tarball = make_tarball(make_dist(tmp_path / "src"), tmp_path / "web.tar.xz")
    data = tmp_path / "data"
    cmd = [sys.executable, "-m", "app.server_main", "--data-dir", str(data), "--install-web", str(tarball)]
    done = subprocess.run([*cmd, "--sha256", sha(tarball)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Installed the web app" in done.stdout and (data / "web" / "index.html").is_file()
    bad = subprocess.run([*cmd, "--sha256", "1" * 64], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 1 and "sha256 does not match" in bad.stderr


def test_install_route_and_live_swap(tmp_path: Path) -> None:
    """A running server with nothing installed shows its own page; the admin route installs, and
    /web/ serves the new app at once; a second install replaces it; errors are 400s."""
    from tests.conftest import complete_wizard, start_server, stop_server

    live = start_server(tmp_path / "data")
    try:
        complete_wizard(live)
        assert "Add the web app" in httpx.get(live.url + "/web/").text
        with live.admin() as admin:
            status = admin.get("/Reelroom/WebClient").json()
            assert status["Hosted"] is False and status["Source"] == "none"
            tarball = make_tarball(make_dist(tmp_path / "one", marker="first"), tmp_path / "one.tar.gz", "w:gz")
            r = admin.post("/Reelroom/WebClient/Install", json={"Path": str(tarball), "Sha256": sha(tarball)},
                           timeout=120)
            assert r.status_code == 200, r.text
            assert r.json()["Hosted"] is True and r.json()["Source"] == "data"
            assert "first" in httpx.get(live.url + "/web/").text
            r = admin.post("/Reelroom/WebClient/Install", json={"Path": str(make_dist(tmp_path / "two", "second"))})
            assert r.status_code == 200
            assert "second" in httpx.get(live.url + "/web/").text
            bad = admin.post("/Reelroom/WebClient/Install", json={"Path": str(tarball), "Sha256": "2" * 64})
            assert bad.status_code == 400 and "sha256" in bad.json()["detail"]
            assert admin.post("/Reelroom/WebClient/Install", json={}).status_code == 400
            assert "second" in httpx.get(live.url + "/web/").text  # the failed install changed nothing
        # not for anyone else
        assert httpx.post(live.url + "/Reelroom/WebClient/Install", json={"Path": str(tarball)}).status_code == 401
        assert httpx.get(live.url + "/Reelroom/WebClient").status_code == 401
    finally:
        stop_server(live)


def test_install_path_only_from_this_machine() -> None:
    """An install is refused (403) unless the client is on loopback (the tray)."""
    from server.api.web_client import from_this_machine

    assert from_this_machine({"client": ("127.0.0.1", 5000)})
    assert from_this_machine({"client": ("::1", 5000)})
    assert from_this_machine({"client": ("::ffff:127.0.0.1", 5000)})
    assert not from_this_machine({"client": ("192.168.1.20", 5000)})
    assert not from_this_machine({"client": ("10.0.0.1", 5000)})
    assert not from_this_machine({})
