"""Inputs of the platform installers, in one place so that the build scripts and the tests read
the same facts: version (from pyproject), names, paths, the macOS Info.plist, the Windows Inno
Setup defines and file list, the Linux .deb control data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_ID = "org.reelroom.Reelroom"
PUBLISHER = "The Reelroom developers"
HTTP_PORT = 8096
DISCOVERY_PORT = 7359


def version() -> str:
    """pyproject's version, read directly (an editable install's metadata can be stale)."""
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def write_version_file(path: Path) -> Path:
    """The bundled VERSION file: server/version.py reads it first in a frozen build."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(version() + "\n", encoding="utf-8")
    return path


def macos_info_plist(ver: str) -> dict:
    return {
        "CFBundleName": "Reelroom",
        "CFBundleDisplayName": "Reelroom",
        "CFBundleIdentifier": APP_ID,
        "CFBundleShortVersionString": ver,
        "CFBundleVersion": ver,
        "CFBundleExecutable": "reelroom",
        "LSUIElement": True,  # a menu-bar app: no Dock icon
        "LSMinimumSystemVersion": "11.0",
        "NSHighResolutionCapable": True,
        "NSLocalNetworkUsageDescription": "Reelroom answers Jellyfin apps that look for servers on your network.",
        "NSBonjourServices": ["_jellyfin._tcp"],
    }


def windows_defines(ver: str, bundle: Path) -> dict[str, str]:
    """The #define lines installer/windows/reelroom.iss expects (written to iss_inputs.iss)."""
    numeric = ".".join((ver.split("+")[0].split("-")[0].split(".") + ["0", "0", "0"])[:4])
    return {
        "AppVersion": ver,
        "AppVersionNumeric": numeric,
        "AppPublisher": PUBLISHER,
        "AppId": "{{6B1C6F8E-2F3B-4C1A-9E1D-5E7A2C0B9D41}",
        "BundleDir": str(bundle),
        "HttpPort": str(HTTP_PORT),
        "DiscoveryPort": str(DISCOVERY_PORT),
        "IconFile": str(ROOT / "resources" / "icons" / "reelroom.ico"),
    }


def bundle_files(bundle: Path) -> list[str]:
    """Every file of a built one-folder bundle, relative, sorted (the installers' file lists)."""
    return sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())


def deb_control(ver: str, installed_kib: int, arch: str) -> str:
    return (f"Package: reelroom\nVersion: {ver}\nSection: video\nPriority: optional\nArchitecture: {arch}\n"
            f"Maintainer: {PUBLISHER} <reelroom@localhost>\nInstalled-Size: {installed_kib}\n"
            "Depends: libc6, libxcb-cursor0, libxkbcommon-x11-0, libegl1, libfontconfig1, libdbus-1-3\n"
            "Homepage: https://github.com/reelroom\n"
            "Description: Home media server that speaks the Jellyfin API\n"
            " Reelroom serves your movies, shows and music to every Jellyfin app. It runs as a tray\n"
            " app (reelroom) or headless (reelroom-server, with a systemd user unit).\n")


WEB_DIST_ENV = "REELROOM_WEB_DIST"


def prepare_web_dist(source: str | None, out: Path) -> Path | None:
    """The web client to bundle (``REELROOM_WEB_DIST``: jellyfin-web's dist as a .tar.xz/.tar.gz/.zip
    or a folder), unpacked with the server's own safe installer into ``out``; None without one.
    The bundle carries it as ``web/``, the second place the server looks (after ``--web-dir``)."""
    if not source:
        return None

    sys.path.insert(0, str(ROOT))
    from server.web.install import install_web

    work = out.parent / (out.name + "-data")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    result = install_web(source, work)
    (result.folder / ".reelroom-install.json").unlink(missing_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    result.folder.rename(out)
    shutil.rmtree(work, ignore_errors=True)
    return out


def write_notice(out: Path, web_bundled: bool) -> Path:
    """NOTICE.txt of the bundle: what it contains and under which licenses."""
    text = (ROOT / "installer" / "NOTICE.txt").read_text(encoding="utf-8")
    if not web_bundled:
        marker = "\n-- jellyfin-web"
        text = text[: text.index(marker)] + "\n" if marker in text else text
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


# Run by write_code_cache in the Python that builds the bundle: a server's start (the entry point's
# imports, a ServerRunner on an empty data folder up to ready and past ``settle``, which saves what
# the start compiled) with server/code_cache.py pointed at the build's file instead of the tree's.
_CODE_CACHE_RUN = """
import sys
from server import code_cache  # (server/__init__ installs it, with the build's file: REELROOM_CODE_CACHE_DIR)
import tempfile, threading, time  # (after it: what they make, shutil's namedtuple, is kept too)
from pathlib import Path
code_cache.FILE = str(Path(sys.argv[1]) / Path(code_cache.FILE).name)
code_cache._codes.clear()  # the tree's own file neither read nor written: every text compiled here
import app.server_main  # noqa: F401  (the entry point's imports)
from server.context import ServerOptions
from server.runner import ServerRunner
with tempfile.TemporaryDirectory() as data:
    runner = ServerRunner(ServerOptions(data_dir=Path(data), port=0, host="127.0.0.1", enable_lan=False))
    thread = threading.Thread(target=runner.serve, daemon=True)
    thread.start()
    if not runner.ready.wait(300):
        sys.exit("the server did not start")
    deadline = time.monotonic() + 120
    while code_cache._active and time.monotonic() < deadline:  # settle(): saved, then let go
        time.sleep(0.05)
    runner.request_shutdown()
    thread.join(60)
print(code_cache.FILE)
"""


def write_code_cache(out: Path, python: str = sys.executable) -> Path:
    """The dataclass methods a server start compiles (server/code_cache.py's file), made by one start
    of this tree's server in ``python`` (the Python whose libraries the bundle holds: the same texts
    and bytecode), for the bundle to ship read-only as ``server/__pycache__/``: a bundle writes
    nothing to its own folders (``sys.frozen``), so without it every start compiled them (~0.5 G
    instructions). A text the bundle's start makes that the file lacks compiles as without it."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("dataclass-code.*.bin"):
        old.unlink()  # a fresh file: no texts of an older tree's classes
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPYCACHEPREFIX"] = str(out / "pycache")  # the run's bytecode stays out of the tree
    env["PYTHONPATH"] = str(ROOT)
    # the cache is the build's file from the start (install reads it, not the tree's): what a start
    # takes before the script's first lines (namedtuples, forward references) is compiled and kept too
    env["REELROOM_CODE_CACHE_DIR"] = str(out)
    run = subprocess.run([python, "-c", _CODE_CACHE_RUN, str(out)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600)
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines or not Path(lines[-1]).is_file():
        raise RuntimeError(f"the code cache run failed ({run.returncode}): {run.stderr[-3000:]}")
    shutil.rmtree(out / "pycache", ignore_errors=True)
    return Path(lines[-1])


def _compile_unchecked(source: Path) -> Path:
    """``source``'s bytecode in its ``__pycache__``, marked as never checked against the source (PEP
    552 unchecked hash): a bundle's files do not change, so its start reads it as it is."""
    import importlib.util
    import py_compile

    return Path(py_compile.compile(str(source), cfile=importlib.util.cache_from_source(str(source)), doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH))


# Run in the Python that builds the bundle: shiboken's signature support (``shibokensupport``), which
# PySide6 loads at its first import from a zip embedded in libshiboken, compiling its ~120,000
# characters of source every start; written out as files for ``shiboken6/files.dir``.
_SHIBOKEN_SUPPORT_RUN = """
import shutil, sys
from pathlib import Path
import shiboken6
import PySide6.QtCore  # noqa: F401  (loads shibokensupport)
out = Path(sys.argv[1])
loader = sys.modules["shibokensupport"].__loader__
if hasattr(loader, "zfile"):  # the embedded zip (shiboken's EmbeddableZipImporter)
    for name in loader.zfile.namelist():
        if name.endswith(".py"):
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(loader.zfile.read(name))
else:  # this environment's shiboken already uses files (SBK_EMBED=0)
    shutil.copytree(Path(shiboken6.__file__).parent / "files.dir", out, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
print(sum(1 for _ in out.rglob("*.py")))
"""


def write_shiboken_support(out: Path, python: str = sys.executable) -> Path:
    """shiboken's signature support as files with their bytecode, for the bundle's
    ``shiboken6/files.dir``: where that folder exists, shiboken imports ``shibokensupport`` from it
    (its own ``SBK_EMBED=0`` layout) instead of compiling the sources of its embedded zip at every
    start of the tray (~0.15 G instructions, a twentieth of its start)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SBK_EMBED")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    run = subprocess.run([python, "-c", _SHIBOKEN_SUPPORT_RUN, str(out)], env=env, capture_output=True, text=True,
                         timeout=300)
    if run.returncode != 0 or not (out / "shibokensupport" / "__init__.py").is_file():
        raise RuntimeError(f"shiboken's support files were not written ({run.returncode}): {run.stderr[-3000:]}")
    for source in sorted(out.rglob("*.py")):
        _compile_unchecked(source)
    return out


#: Packages whose ``__init__`` reads its own source at import: anyio's lazy importer
#: (``anyio._lazyimport``) parses it with ``inspect.getsource``; without the source (a bundle ships
#: bytecode) it imports every submodule at once (streams, TLS, sockets: ~60 modules and ~30
#: dataclasses a start did not need).
SOURCE_PACKAGES = ("anyio", "anyio.abc")


def write_package_sources(out: Path, packages: tuple[str, ...] = SOURCE_PACKAGES) -> list[tuple[str, str]]:
    """The ``__init__.py`` of each package with its bytecode (``__pycache__``, unchecked), as
    PyInstaller datas: imported as a source file whose bytecode is kept, so the package finds its
    source and nothing compiles."""
    import importlib.util

    shutil.rmtree(out, ignore_errors=True)
    datas = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.origin or not spec.origin.endswith("__init__.py"):
            raise RuntimeError(f"{package} is not a package with an __init__.py here")
        folder = out / package.replace(".", "/")
        folder.mkdir(parents=True)
        source = folder / "__init__.py"
        shutil.copyfile(spec.origin, source)
        datas.append((str(source), package.replace(".", "/")))
        datas.append((str(_compile_unchecked(source)), package.replace(".", "/") + "/__pycache__"))
    return datas


def write_windows_inputs(bundle: Path, out: Path) -> Path:
    """installer/windows/iss_inputs.iss: the defines and the [Files] entries of the bundle."""
    ver = version()
    lines = ["; Generated by installer/inputs.py from pyproject and the built bundle. Do not edit."]
    lines += [f'#define {k} "{v}"' for k, v in windows_defines(ver, bundle).items()]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    files = out.with_name("iss_files.txt")
    files.write_text("\n".join(bundle_files(bundle)) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    import json

    print(json.dumps({"version": version(), "plist": macos_info_plist(version())}, indent=2))
