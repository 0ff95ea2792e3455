"""Configuration sections declared by their domains: the store imports no domain, a registered
section brings its defaults, validator and listeners, and the HTTP API goes through them."""

from __future__ import annotations

import ast
import asyncio
import json
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from server.errors import BadRequestError
from server.paths import ServerPaths
from server.system.configuration import ConfigSection, ConfigurationStore
from server.wire import models as w

ROOT = Path(__file__).resolve().parents[2]
STORE_MODULE = ROOT / "server" / "system" / "configuration.py"
# What the store may build on: the shared error types, the data folder layout and the wire types.
ALLOWED_SERVER_IMPORTS = ("server.errors", "server.paths", "server.wire")


def _imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports, at module level or inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"relative import in {path.name}"
            base = node.module or ""
            found += [base] + [f"{base}.{alias.name}" for alias in node.names if base == "server"]
    return found


def test_the_configuration_store_imports_no_domain() -> None:
    modules = _imported_modules(STORE_MODULE)
    assert "server.wire.models" in modules or "server.wire" in modules  # the walk sees the imports
    server_imports = [m for m in modules if m == "server" or m.startswith("server.")]
    strays = [m for m in server_imports if m == "server" or not m.startswith(ALLOWED_SERVER_IMPORTS)]
    assert not strays, f"server/system/configuration.py imports domain modules: {strays}"
    third_party = {m.split(".")[0] for m in modules} - {"server", "__future__", "msgspec"}
    assert third_party <= set(sys.stdlib_module_names), third_party


# -- the store on a real data folder --------------------------------------------------------------


def _level(data: dict[str, Any]) -> dict[str, Any]:
    level = data.get("Level", 3)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= 10:
        raise BadRequestError("Level must be a whole number from 0 to 10.")
    return {"Level": level, "Secret": str(data.get("Secret", ""))}


LEVEL = ConfigSection("levels", lambda _paths: {"Level": 3, "Secret": ""}, validate=_level,
                      redact=lambda value: {k: v for k, v in value.items() if k != "Secret"})


@pytest.fixture
def store(tmp_path: Path) -> ConfigurationStore:
    paths = ServerPaths(tmp_path / "data")
    paths.ensure()
    return ConfigurationStore(paths)


def test_a_registered_section_has_its_defaults_and_validator(store: ConfigurationStore) -> None:
    store.register(LEVEL)
    assert store.get("levels") == {"Level": 3, "Secret": ""}
    assert store.get("Levels") is store.get("levels")  # keys are case-insensitive
    assert store.parse("levels", {"Level": 7}) == {"Level": 7, "Secret": ""}
    with pytest.raises(BadRequestError, match="Level must be"):
        store.parse("levels", {"Level": 11})
    with pytest.raises(BadRequestError, match="JSON object"):
        store.parse("levels", [1, 2])
    with pytest.raises(ValueError, match="already registered"):
        store.register(LEVEL)
    with pytest.raises(ValueError, match="lower case"):
        store.register(ConfigSection("Upper", lambda _paths: {}))


def test_a_wire_section_converts_and_merges(store: ConfigurationStore) -> None:
    store.register(ConfigSection("branding2", lambda _paths: w.BrandingOptions(
        LoginDisclaimer="hello", CustomCss="", SplashscreenEnabled=False), wire_type=w.BrandingOptions))
    value = store.parse("branding2", {"customcss": "body{}"})  # keys in any case, as clients send them
    assert isinstance(value, w.BrandingOptions) and value.CustomCss == "body{}"
    with pytest.raises(BadRequestError, match="Invalid branding2"):
        store.parse("branding2", {"SplashscreenEnabled": "very"})
    store.save("branding2", value)
    merged = store.get("branding2")
    assert merged.CustomCss == "body{}" and merged.LoginDisclaimer == "hello"  # fields left out keep theirs
    reread = ConfigurationStore(store.paths)
    reread.register(ConfigSection("branding2", lambda _paths: w.BrandingOptions(LoginDisclaimer="default"),
                                  wire_type=w.BrandingOptions))
    assert reread.get("branding2").CustomCss == "body{}"


def test_registering_after_a_read_reads_again_with_the_defaults(store: ConfigurationStore) -> None:
    assert store.get("levels") == {}  # nobody declared it yet: a plain, empty JSON object
    store.register(LEVEL)
    assert store.get("levels") == {"Level": 3, "Secret": ""}


def test_unregistered_keys_keep_plain_json(store: ConfigurationStore) -> None:
    assert store.section("plugin-abc") is None
    assert store.parse("plugin-abc", {"Anything": [1]}) == {"Anything": [1]}
    with pytest.raises(BadRequestError):
        store.parse("plugin-abc", "text")
    store.save("plugin-abc", {"Anything": [1]})
    assert ConfigurationStore(store.paths).get("plugin-abc") == {"Anything": [1]}


def test_listeners_are_called_once_per_save_and_a_failing_one_loses_nothing(
        store: ConfigurationStore, caplog: pytest.LogCaptureFixture) -> None:
    store.register(LEVEL)
    seen: list[Any] = []
    everything: list[tuple[str, Any]] = []

    def broken(_value: Any) -> None:
        raise RuntimeError("listener bug")

    store.on_change("levels", broken)
    remove = store.on_change("LEVELS", seen.append)
    store.add_listener(lambda key, value: everything.append((key, value)))
    with caplog.at_level(logging.ERROR, logger="reelroom.config"):
        store.save("levels", {"Level": 5, "Secret": "s"})
    assert seen == [{"Level": 5, "Secret": "s"}]
    assert everything == [("levels", {"Level": 5, "Secret": "s"})]
    assert "listener bug" in caplog.text  # logged with its traceback
    on_disk = json.loads((store.paths.config_dir / "levels.json").read_text(encoding="utf-8"))
    assert on_disk == {"Level": 5, "Secret": "s"}
    assert store.get("levels") == on_disk
    store.save("network", msgspec.structs.replace(store.network(), AutoDiscovery=False))
    assert len(seen) == 1 and [k for k, _ in everything] == ["levels", "network"]  # only its own key
    remove()
    store.save("levels", {"Level": 6, "Secret": ""})
    assert len(seen) == 1 and len(everything) == 3


def test_listeners_hear_concurrent_saves_in_the_order_they_were_written(store: ConfigurationStore) -> None:
    store.register(LEVEL)
    seen: list[str] = []

    def slow(value: Any) -> None:
        time.sleep(0.002 * (value["Level"] % 3))  # uneven listeners: unserialized saves would reorder
        seen.append(value["Secret"])

    store.on_change("levels", slow)
    threads = [threading.Thread(target=store.save, args=("levels", {"Level": n % 11, "Secret": str(n)}))
               for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(seen) == 40
    on_disk = json.loads((store.paths.config_dir / "levels.json").read_text(encoding="utf-8"))
    assert seen[-1] == on_disk["Secret"] == store.get("levels")["Secret"]


# -- through the real server ------------------------------------------------------------------------


def _user_token(c, live, name: str) -> str:
    assert c.post("/Users/New", json={"Name": name, "Password": "pw"}).status_code == 200
    with live.client(device=f"{name}-device") as u:
        r = u.post("/Users/AuthenticateByName", json={"Username": name, "Pw": "pw"})
        assert r.status_code == 200, r.text
        return r.json()["AccessToken"]


def test_a_registered_section_over_http(server) -> None:
    config = server.ctx.config
    config.register(LEVEL)
    calls: list[tuple[Any, str, bool]] = []

    def listener(value: Any) -> None:
        try:
            asyncio.get_running_loop()
            on_loop = True
        except RuntimeError:
            on_loop = False
        calls.append((value, threading.current_thread().name, on_loop))

    def broken(_value: Any) -> None:
        raise RuntimeError("listener bug")

    config.on_change("levels", broken)  # registered first: the next listener still runs
    config.on_change("levels", listener)
    with server.admin() as c:
        assert c.get("/System/Configuration/levels").json() == {"Level": 3, "Secret": ""}
        bad = c.post("/System/Configuration/levels", json={"Level": 99})
        assert bad.status_code == 400
        assert bad.headers["content-type"].startswith("application/problem+json")
        assert "Level must be" in bad.json()["detail"]
        assert c.post("/System/Configuration/Levels", json=[1]).status_code == 400
        assert not calls and not (server.data_dir / "config" / "levels.json").exists()  # nothing saved

        assert c.post("/System/Configuration/Levels", json={"Level": 8, "Secret": "hush"}).status_code == 204
        assert [value for value, _, _ in calls] == [{"Level": 8, "Secret": "hush"}]  # once, after the save
        assert calls[0][2] is False, f"the listener ran on the event loop ({calls[0][1]})"
        assert c.get("/System/Configuration/levels").json() == {"Level": 8, "Secret": "hush"}
        token = _user_token(c, server, "levelviewer")
    stored = json.loads((server.data_dir / "config" / "levels.json").read_text(encoding="utf-8"))
    assert stored == {"Level": 8, "Secret": "hush"}  # the failing listener lost nothing
    with server.client(token, "levelviewer-device") as u:
        assert u.get("/System/Configuration/levels").json() == {"Level": 8}  # redacted for non-admins
        assert u.post("/System/Configuration/levels", json={"Level": 1}).status_code == 403


def test_unknown_and_internal_sections_keep_their_answers(server) -> None:
    with server.admin() as c:
        for key in ("nosuchthing", "system", "libraryhosts"):
            assert c.get(f"/System/Configuration/{key}").status_code == 404, key
            r = c.post(f"/System/Configuration/{key}", json={"A": 1})
            assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem+json"), key
        bad_json = c.post("/System/Configuration/nosuchthing", content=b"{", headers={
            "Content-Type": "application/json"})
        assert bad_json.status_code == 400  # the body is read first, as before
        assert not (server.data_dir / "config" / "nosuchthing.json").exists()


def test_domain_sections_are_registered_with_their_validators(server) -> None:
    config = server.ctx.config
    assert {"encoding", "transcoding", "livetv", "metadata", "xbmcmetadata", "filesystem", "web", "tmdb",
            "musicbrainz", "tvmaze", "fanart", "opensubtitles", "lrclib", "schedulesdirect", "network",
            "branding", "desktop"} <= set(config.keys())
    with server.admin() as c:
        transcoding = c.get("/System/Configuration/transcoding").json()
        assert transcoding == {"MaxConcurrentTranscodes": 8, "IdleTimeoutSeconds": 60, "ThrottleAheadSegments": 30}
        r = c.post("/System/Configuration/transcoding", json={"IdleTimeoutSeconds": 0})
        assert r.status_code == 400 and "IdleTimeoutSeconds" in r.json()["detail"]
        assert c.post("/System/Configuration/transcoding", json={"MaxConcurrentTranscodes": 2}).status_code == 204
        assert c.get("/System/Configuration/transcoding").json() == dict(transcoding, MaxConcurrentTranscodes=2)
        assert c.post("/System/Configuration/web", json={"HostWebClient": "yes"}).status_code == 400
        livetv = c.get("/System/Configuration/livetv").json()
        assert livetv["TunerHosts"] == [] and livetv["RecordingPostProcessorArguments"] == '"{path}"'
        assert c.post("/System/Configuration/livetv", json={"GuideDays": "many"}).status_code == 400
        assert c.get("/System/Configuration/xbmcmetadata").json()["ReleaseDateFormat"] == "yyyy-MM-dd"
        assert c.get("/System/Configuration/encoding").json()["TranscodingTempPath"] == str(
            server.ctx.paths.transcode_dir)
