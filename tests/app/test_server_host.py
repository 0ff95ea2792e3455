"""The desktop app's server host: start, state, API key, restart, stop and a dying thread."""

from __future__ import annotations

import httpx

from app.server_host import ServerHost


def test_host_starts_restarts_and_stops(tmp_path):
    host = ServerHost(tmp_path / "data", port=0, host="127.0.0.1", enable_lan=False)
    states: list[str] = []
    host.add_state_listener(states.append)
    host.start()
    assert host.wait_until_running(30)
    assert host.state == "running"
    key = host.desktop_api_key()
    assert httpx.get(host.base_url + "/System/Info", params={"api_key": key}).status_code == 200
    first_port = host.port
    host.restart()
    assert host.wait_until_running(30)
    assert host.port is not None and host.port > 0
    # The key survives a restart (it is stored in the database).
    assert httpx.get(host.base_url + "/System/Info", params={"api_key": host.desktop_api_key()}).status_code == 200
    host.stop()
    assert host.state == "stopped"
    assert "running" in states and states[-1] == "stopped"
    assert first_port


def test_host_reports_error_when_the_server_cannot_start(tmp_path):
    import socket

    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    port = blocker.getsockname()[1]
    try:
        host = ServerHost(tmp_path / "data", port=port, host="127.0.0.1", enable_lan=False)
        host.start()
        host._thread.join(10)
        assert host.state == "error"
        assert host.error
        host.start()  # a restart is offered: it tries again
        host._thread.join(10)
        assert host.state == "error"
    finally:
        blocker.close()


def test_saved_port_is_used_unless_a_port_is_given(tmp_path):
    import json
    import socket

    from app.server_host import DEFAULT_PORT, configured_port
    from app.server_main import build_parser, options_from

    data = tmp_path / "data"
    assert configured_port(data) == DEFAULT_PORT
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        saved = s.getsockname()[1]
    (data / "config").mkdir(parents=True)
    (data / "config" / "network.json").write_text(json.dumps({"InternalHttpPort": saved}))
    assert configured_port(data) == saved
    parser = build_parser("reelroom-server", "")
    assert options_from(parser.parse_args(["--data-dir", str(data)])).port == saved
    assert options_from(parser.parse_args(["--data-dir", str(data), "--port", "0"])).port == 0

    host = ServerHost(data, port=None, host="127.0.0.1", enable_lan=False)
    host.start()
    try:
        assert host.wait_until_running(30)
        assert host.port == saved
        assert httpx.get(f"http://127.0.0.1:{saved}/System/Info/Public").status_code == 200
    finally:
        host.stop()
    (data / "config" / "network.json").write_text("{not json")
    assert configured_port(data) == DEFAULT_PORT
