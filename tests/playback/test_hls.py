"""HLS over HTTP against a real server with a scanned, ffmpeg-generated library: master -> main ->
segments (remux and transcode, ts and fMP4), audio HLS from the universal redirect, seeking,
shared jobs, DELETE /Videos/ActiveEncodings, idle kill, the concurrency limit, and no ffmpeg left."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import av
import httpx
import msgspec
import pytest

from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan
from tests.mediagen import make_audio, make_video
from tests.playback.device_profiles import browser_profile, restrictive_tv_profile

SEGMENT = 6.0


def _h264_clip(path: Path, seconds: int) -> Path:
    """H.264 + AAC in MKV with a keyframe every second, so a remux cuts 6 s segments."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
         "-f", "lavfi", "-i", f"testsrc2=size=320x240:rate=24:duration={seconds}",
         "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={seconds}",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-profile:v", "high",
         "-g", "24", "-keyint_min", "24", "-sc_threshold", "0", "-c:a", "aac", "-t", str(seconds), str(path)],
        check=True, capture_output=True,
    )
    return path


def _ffmpeg_children() -> list[int]:
    """ffmpeg processes whose parent is this test process."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        ppid = re.search(r"^PPid:\s+(\d+)", status, re.M)
        if ppid and int(ppid.group(1)) == me and os.path.basename(cmdline).startswith("ffmpeg") \
                and "State:\tZ" not in status:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> LiveServer:
    root = tmp_path_factory.mktemp("hls-media")
    movies, music = root / "Movies", root / "Music"
    _h264_clip(movies / "Remux Clip (2001)" / "Remux Clip (2001).mkv", 14)
    make_video(movies / "Old Clip (1990)" / "Old Clip (1990).mkv", seconds=40, vcodec="mpeg4")
    make_audio(music / "Artist" / "Album" / "01 - Tone.flac", seconds=14,
               tags={"title": "Tone", "artist": "Artist", "album": "Album", "track": "1"})
    server = start_server(tmp_path_factory.mktemp("hls-server") / "data")
    complete_wizard(server)
    with server.admin() as c:
        encoding = c.get("/System/Configuration/encoding").json()
        encoding["EncoderPreset"] = "ultrafast"
        assert c.post("/System/Configuration/encoding", json=encoding).status_code == 204
    add_library_and_scan(server, "Movies", "movies", [movies])
    add_library_and_scan(server, "Music", "music", [music])
    yield server
    stop_server(server)
    deadline = time.monotonic() + 10
    while _ffmpeg_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _ffmpeg_children() == [], "ffmpeg processes outlived the server"


@pytest.fixture(autouse=True)
def _stop_jobs_after(live):
    """Each test starts from no running transcodes (a real player's Stopped report does this)."""
    yield
    for job in live.ctx.transcodes.jobs:
        live.ctx.transcodes.on_playback_stopped(job.key.play_session_id)


def _item(live: LiveServer, name: str) -> str:
    with live.admin() as c:
        found = c.get("/Items", params={"recursive": "true", "searchTerm": name,
                                        "includeItemTypes": "Movie,Audio"}).json()["Items"]
    match = [i for i in found if i["Name"] == name]
    assert match, f"{name} was not scanned"
    return match[0]["Id"]


def _transcoding_url(live: LiveServer, name: str, profile) -> str:
    with live.admin() as c:
        r = c.post(f"/Items/{_item(live, name)}/PlaybackInfo", params={"userId": live.admin_id},
                   json={"DeviceProfile": msgspec.to_builtins(profile)})
    assert r.status_code == 200, r.text
    url = r.json()["MediaSources"][0]["TranscodingUrl"]
    assert "/master.m3u8?" in url and "api_key=" in url
    return url


def _with(url: str, **changes: str) -> str:
    """The URL with query parameters replaced (case-insensitively) or added."""
    parts = urlsplit(url)
    pairs = [(k, v) for k, v in parse_qsl(parts.query) if k.lower() not in {c.lower() for c in changes}]
    pairs += list(changes.items())
    return urlunsplit(parts._replace(query=urlencode(pairs)))


def _player() -> httpx.Client:
    """A player: no auth headers, only the api_key the URLs carry."""
    return httpx.Client(timeout=60)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _open(live: LiveServer, master_url: str) -> tuple[str, str, list[str], str | None]:
    """master -> main: (master text, main text, absolute segment URLs, init URL)."""
    with _player() as c:
        master_abs = urljoin(live.url, master_url)
        master = c.get(master_abs)
        assert master.status_code == 200, master.text
        assert master.headers["content-type"].lower().startswith("application/x-mpegurl")
        variant = [line for line in _lines(master.text) if not line.startswith("#")][0]
        main_abs = urljoin(master_abs, variant)
        main = c.get(main_abs)
        assert main.status_code == 200, main.text
    segments = [urljoin(main_abs, line) for line in _lines(main.text) if not line.startswith("#")]
    init = re.search(r'#EXT-X-MAP:URI="([^"]+)"', main.text)
    return master.text, main.text, segments, urljoin(main_abs, init.group(1)) if init else None


def _fetch(url: str) -> bytes:
    with _player() as c:
        r = c.get(url)
    assert r.status_code == 200, r.text
    return r.content


def _media(data: bytes, fmt: str, kind: str = "video") -> tuple[float, float, str, int]:
    """(first timestamp, duration, codec, decoded frames) of the first ``kind`` stream."""
    with av.open(io.BytesIO(data), format=fmt) as container:
        stream = container.streams.video[0] if kind == "video" else container.streams.audio[0]
        first = last = None
        frames = 0
        for frame in container.decode(stream):
            frames += 1
            t = float(frame.pts * frame.time_base)
            end = t + (float(frame.duration * frame.time_base) if frame.duration else
                       (1 / 24 if kind == "video" else frame.samples / frame.sample_rate))
            first = t if first is None else min(first, t)
            last = end if last is None else max(last, end)
        assert frames > 0
        return first, last - first, stream.codec_context.name, frames


def _session(url: str) -> str:
    return dict(parse_qsl(urlsplit(url).query))["PlaySessionId"]


def _job(live: LiveServer, session: str):
    jobs = [j for j in live.ctx.transcodes.jobs if j.key.play_session_id == session]
    assert len(jobs) == 1, f"expected one job for {session}, got {len(jobs)}"
    return jobs[0]


# -- master -> main -> segments --------------------------------------------------------------------


def test_remux_master_main_first_segment(live):
    url = _transcoding_url(live, "Remux Clip", browser_profile())  # MKV in a browser: HLS remux
    master, main, segments, init = _open(live, url)
    stream_inf = [line for line in master.splitlines() if line.startswith("#EXT-X-STREAM-INF:")][0]
    assert re.search(r"BANDWIDTH=\d+", stream_inf)
    assert re.search(r'CODECS="avc1\.42[0-9a-f]{2}0d,mp4a\.40\.2"', stream_inf)  # constrained baseline 1.3
    assert "RESOLUTION=320x240" in stream_inf
    assert "#EXT-X-PLAYLIST-TYPE:VOD" in main and "#EXT-X-ENDLIST" in main
    assert "#EXT-X-TARGETDURATION:6" in main and init is None
    assert len(segments) == 3  # 14 s: 6 + 6 + 2, listed up front so players can seek
    assert [round(float(d)) for d in re.findall(r"#EXTINF:([\d.]+),", main)] == [6, 6, 2]
    assert all("api_key=" in s and "runtimeTicks=" in s for s in segments)
    first, duration, codec, _ = _media(_fetch(segments[0]), "mpegts")
    assert codec == "h264" and abs(duration - SEGMENT) <= 0.5
    job = _job(live, _session(url))
    command = job.runs[0].command
    assert command[command.index("-c:v") + 1] == "copy"


def test_transcode_from_playback_info(live):
    url = _transcoding_url(live, "Old Clip", restrictive_tv_profile())  # MPEG-4 part 2: transcode
    master, _main, segments, _ = _open(live, url)
    assert 'CODECS="avc1.' in master
    assert len(segments) == 7  # 40 s
    data = _fetch(segments[0])
    _first, duration, codec, _ = _media(data, "mpegts")
    assert codec == "h264" and abs(duration - SEGMENT) <= 0.5
    _first, audio_duration, audio_codec, _ = _media(data, "mpegts", "audio")
    assert audio_codec == "aac" and abs(audio_duration - SEGMENT) <= 0.5
    command = _job(live, _session(url)).runs[0].command
    assert "libx264" in command and any(a.startswith("expr:gte(t,n_forced*6)") for a in command)


def test_fmp4_init_and_segment(live):
    url = _transcoding_url(live, "Remux Clip", browser_profile())
    url = _with(url, SegmentContainer="mp4", PlaySessionId="fmp4session")
    _master, main, segments, init = _open(live, url)
    assert init is not None and "/hls1/main/-1.mp4?" in init and "#EXT-X-VERSION:7" in main
    assert all(".mp4?" in s for s in segments)
    init_bytes = _fetch(init)
    assert b"ftyp" in init_bytes[:64] and b"moov" in init_bytes
    segment = _fetch(segments[0])
    _first, duration, codec, _ = _media(init_bytes + segment, "mp4")
    assert codec == "h264" and abs(duration - SEGMENT) <= 0.5


def test_audio_hls_from_universal_redirect(live):
    item = _item(live, "Tone")
    query = {"UserId": live.admin_id, "DeviceId": "audio-device", "MaxStreamingBitrate": "320000",
             "Container": "mp3,aac", "TranscodingContainer": "ts", "TranscodingProtocol": "hls",
             "AudioCodec": "aac", "api_key": live.admin_token}
    with _player() as c:
        r = c.get(f"{live.url}/Audio/{item}/universal", params=query)
        assert r.status_code == 302, r.text
        main_url = urljoin(f"{live.url}/Audio/{item}/universal", r.headers["location"])
        main = c.get(main_url)
        assert main.status_code == 200, main.text
    segments = [urljoin(main_url, line) for line in _lines(main.text) if not line.startswith("#")]
    assert len(segments) == 3
    _first, duration, codec, _ = _media(_fetch(segments[0]), "mpegts", "audio")
    assert codec == "aac" and abs(duration - SEGMENT) <= 0.5


# -- seeking -------------------------------------------------------------------------------------


def test_seek_restarts_ffmpeg_at_the_segment(live):
    url = _with(_transcoding_url(live, "Old Clip", restrictive_tv_profile()), PlaySessionId="seeksession")
    manager = live.ctx.transcodes.manager()
    gap = manager.seek_gap_seconds
    manager.seek_gap_seconds = SEGMENT  # a request one segment past the encoder is a seek
    try:
        _master, _main, segments, _ = _open(live, url)
        job = _job(live, "seeksession")
        # Hold the first ffmpeg where it is: on a quiet machine it could otherwise reach 30 s
        # before the request below, and there would be nothing to seek to.
        os.kill(job.runs[0].process.pid, signal.SIGSTOP)
        later, _, _, _ = _media(_fetch(segments[5]), "mpegts")  # 30 s in, beyond the encoder
    finally:
        manager.seek_gap_seconds = gap
    assert any(run.start_segment == 5 for run in job.runs)
    assert "-ss" in job.runs[-1].command and job.runs[-1].command[job.runs[-1].command.index("-ss") + 1] == "30"
    start, _, _, _ = _media(_fetch(segments[0]), "mpegts")  # back to the start: another restart
    assert abs((later - start) - 5 * SEGMENT) <= 0.5


def test_start_time_ticks(live):
    url = _with(_transcoding_url(live, "Old Clip", restrictive_tv_profile()), PlaySessionId="startsession",
                StartTimeTicks=str(18 * 10_000_000))
    _master, main, segments, _ = _open(live, url)
    assert "#EXT-X-START:TIME-OFFSET=18.000" in main and len(segments) == 7
    job = _job(live, "startsession")
    assert job.runs[0].start_segment == 3  # ffmpeg began where the player will
    third, duration, _, _ = _media(_fetch(segments[3]), "mpegts")
    assert abs(duration - SEGMENT) <= 0.5 and len(job.runs) == 1


# -- jobs ----------------------------------------------------------------------------------------


def test_jobs_are_shared_per_play_session(live):
    url = _transcoding_url(live, "Remux Clip", browser_profile())
    session = _session(url)
    _, _, segments, _ = _open(live, url)
    _fetch(segments[0])
    _, _, again, _ = _open(live, url)  # the same session reopens the playlist
    _fetch(again[1])
    job = _job(live, session)
    assert len(job.runs) == 1
    other = _with(url, PlaySessionId="othersession")
    _, _, other_segments, _ = _open(live, other)
    _fetch(other_segments[0])
    assert _job(live, "othersession") is not job


def test_active_encodings_delete_kills_ffmpeg(live):
    url = _with(_transcoding_url(live, "Old Clip", restrictive_tv_profile()), PlaySessionId="deletesession",
                DeviceId="delete-device")
    _open(live, url)
    job = _job(live, "deletesession")
    pid = job.runs[-1].process.pid
    with live.admin() as c:
        r = c.delete("/Videos/ActiveEncodings", params={"deviceId": "delete-device", "playSessionId": "deletesession"})
    assert r.status_code == 204, r.text
    assert not _alive(pid) and not job.directory.exists()
    assert not [j for j in live.ctx.transcodes.jobs if j.key.play_session_id == "deletesession"]
    with live.client() as c:
        assert c.delete("/Videos/ActiveEncodings", params={"deviceId": "x", "playSessionId": "y"}).status_code == 401


def test_playback_stopped_report_stops_the_job(live):
    url = _with(_transcoding_url(live, "Old Clip", restrictive_tv_profile()), PlaySessionId="stoppedsession")
    _open(live, url)
    pid = _job(live, "stoppedsession").runs[-1].process.pid
    with live.admin() as c:
        r = c.post("/Sessions/Playing/Stopped", json={"ItemId": _item(live, "Old Clip"),
                                                        "PlaySessionId": "stoppedsession", "PositionTicks": 0})
    assert r.status_code == 204, r.text
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(pid)


def _set_transcoding(live: LiveServer, **values) -> None:
    with live.admin() as c:
        current = c.get("/System/Configuration/transcoding").json()
        current.update(values)
        assert c.post("/System/Configuration/transcoding", json=current).status_code == 204


def test_idle_job_is_killed(live):
    _set_transcoding(live, IdleTimeoutSeconds=1)
    try:
        url = _with(_transcoding_url(live, "Old Clip", restrictive_tv_profile()), PlaySessionId="idlesession")
        _open(live, url)
        job = _job(live, "idlesession")
        pid = job.runs[-1].process.pid
        deadline = time.monotonic() + 10
        # closed is set before the folder is removed (a reader racing the close sees it first)
        while (not job.closed or job.directory.exists()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert job.closed and not _alive(pid) and not job.directory.exists()
        assert not [j for j in live.ctx.transcodes.jobs if j.key.play_session_id == "idlesession"]
    finally:
        _set_transcoding(live, IdleTimeoutSeconds=60)


def test_concurrency_limit_answers_503(live):
    for job in live.ctx.transcodes.jobs:
        live.ctx.transcodes.on_playback_stopped(job.key.play_session_id)
    _set_transcoding(live, MaxConcurrentTranscodes=1)
    try:
        base = _transcoding_url(live, "Old Clip", restrictive_tv_profile())
        _open(live, _with(base, PlaySessionId="limit1"))
        with _player() as c:
            master = urljoin(live.url, _with(base, PlaySessionId="limit2"))
            main = master.replace("/master.m3u8", "/main.m3u8")
            r = c.get(main)
        assert r.status_code == 503
        assert r.headers["content-type"].startswith("application/problem+json")
        assert "transcoding" in r.json()["detail"].lower()
    finally:
        _set_transcoding(live, MaxConcurrentTranscodes=8)


def test_bad_requests_are_4xx(live):
    url = _transcoding_url(live, "Remux Clip", browser_profile())
    with _player() as c:
        assert c.get(urljoin(live.url, _with(url, SegmentContainer="avi"))).status_code == 400
        assert c.get(urljoin(live.url, _with(url, SegmentLength="0"))).status_code == 400
        _, _, segments, _ = _open(live, url)
        assert c.get(segments[0].replace("/0.ts?", "/99.ts?")).status_code == 404
        assert c.get(segments[0].replace("/0.ts?", "/0.mp4?")).status_code == 400
        head = c.head(urljoin(live.url, url))
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-type"].lower().startswith("application/x-mpegurl")
        no_key = _with(url, api_key="")
        assert c.get(urljoin(live.url, no_key)).status_code == 401


def test_failed_hardware_encode_falls_back_to_software(live, caplog):
    """VAAPI on a device that does not exist: ffmpeg fails, the job retries in software, says why."""
    with live.admin() as c:
        original = c.get("/System/Configuration/encoding").json()
        broken = dict(original, HardwareAccelerationType="vaapi", VaapiDevice="/dev/dri/no-such-device",
                      EnableHardwareEncoding=True)
        assert c.post("/System/Configuration/encoding", json=broken).status_code == 204
    try:
        if not live.ctx.transcodes.ffmpeg().has_encoder("h264_vaapi"):
            pytest.skip("this ffmpeg has no h264_vaapi encoder")
        url = _with(_transcoding_url(live, "Old Clip", restrictive_tv_profile()), PlaySessionId="hwsession")
        with caplog.at_level("WARNING", logger="server.playback.transcode_jobs"):
            _, _, segments, _ = _open(live, url)
            _first, duration, codec, _ = _media(_fetch(segments[0]), "mpegts")
        assert codec == "h264" and abs(duration - SEGMENT) <= 0.5
        job = _job(live, "hwsession")
        assert job.software_only and job.runs[0].hardware.value == "vaapi"
        assert "h264_vaapi" in job.runs[0].command and "libx264" in job.runs[-1].command
        assert any("retrying in software" in r.getMessage() for r in caplog.records)
    finally:
        with live.admin() as c:
            assert c.post("/System/Configuration/encoding", json=original).status_code == 204


def test_max_width_scales_the_transcode(live):
    url = _with(_transcoding_url(live, "Old Clip", restrictive_tv_profile()), PlaySessionId="scaledsession",
                MaxWidth="160")
    master, _main, segments, _ = _open(live, url)
    assert "RESOLUTION=160x120" in master
    with av.open(io.BytesIO(_fetch(segments[0])), format="mpegts") as container:
        frame = next(container.decode(video=0))
        assert (frame.width, frame.height) == (160, 120)


def test_legacy_playlist_and_anonymous_legacy_segments(live):
    item = _item(live, "Remux Clip")
    query = {"api_key": live.admin_token, "MediaSourceId": item, "VideoCodec": "h264", "AudioCodec": "aac",
             "DeviceId": "legacy-device"}
    with _player() as c:
        playlist_url = f"{live.url}/Videos/{item}/hls/legacysession/stream.m3u8?{urlencode(query)}"
        r = c.get(playlist_url)
        assert r.status_code == 200, r.text
        segments = [urljoin(playlist_url, line) for line in _lines(r.text) if not line.startswith("#")]
        assert len(segments) == 3 and f"/Videos/{item}/hls/legacysession/0.ts" in segments[0]
        bare = segments[0].split("?")[0]  # the legacy segment route is anonymous: no api_key needed
        seg = c.get(bare)
        assert seg.status_code == 200
        _first, duration, codec, _ = _media(seg.content, "mpegts")
        assert codec == "h264" and abs(duration - SEGMENT) <= 0.5
        assert c.get(bare.replace("legacysession", "nosuchsession")).status_code == 404
        assert c.get(f"{live.url}/Audio/{item}/hls/0/stream.aac").status_code == 404


def test_a_whole_link_video_bitrate_is_capped_and_kept_off_the_audio_encoder(live):
    """jellyfin-web asks for what it measured on loopback (over 1 Gbit/s): the encoder gets a sane
    target and a rate-control buffer for the video only, and the segment decodes (ffmpeg refused
    to open the AAC encoder with a 2.2 Gbit buffer before)."""
    url = _with(_transcoding_url(live, "Old Clip", restrictive_tv_profile()), PlaySessionId="linksession",
                VideoBitRate="1112454781")
    _master, _main, segments, _ = _open(live, url)
    data = _fetch(segments[0])
    assert _media(data, "mpegts")[2] == "h264" and _media(data, "mpegts", "audio")[2] == "aac"
    command = _job(live, _session(url)).runs[0].command
    rate = int(command[command.index("-b:v") + 1])
    assert rate <= 200_000_000 and "-bufsize" not in command and "-maxrate" not in command
    assert int(command[command.index("-bufsize:v") + 1]) == 2 * rate


# -- the segment path: the running job first, planning only on a miss ------------------------------


@pytest.fixture
def plans(monkeypatch):
    """Counts the stream plans the (in-process) server makes."""
    from server.playback import hls_service

    made: list[str] = []
    original = hls_service.plan_hls

    def counted(row, params, **kwargs):
        made.append(params.play_session_id or "")
        return original(row, params, **kwargs)

    monkeypatch.setattr(hls_service, "plan_hls", counted)
    return made


def test_segments_of_a_running_job_are_served_without_planning(live, plans):
    url = _with(_transcoding_url(live, "Remux Clip", browser_profile()), PlaySessionId="hitsession")
    _master, _main, segments, _ = _open(live, url)
    assert plans == ["hitsession", "hitsession"]  # the master and the main playlist
    job = _job(live, "hitsession")
    for segment in segments:
        _media(_fetch(segment), "mpegts")
    assert len(plans) == 2, "a segment of the running job planned the stream again"
    assert _job(live, "hitsession") is job and len(job.runs) == 1
    # Another query on the same session is a miss: planned once, then served from its job.
    other = _with(segments[0], MaxWidth="160")
    _fetch(other)
    _fetch(other)
    assert len(plans) == 3
    # A segment container the stream does not make is refused from the job as before the change.
    with _player() as c:
        assert c.get(segments[0].replace("/0.ts?", "/0.mp4?")).status_code == 400


def test_a_segment_after_the_job_ended_starts_a_new_one(live, plans):
    url = _with(_transcoding_url(live, "Remux Clip", browser_profile()), PlaySessionId="endedsession")
    _, _, segments, _ = _open(live, url)
    _fetch(segments[0])
    first = _job(live, "endedsession")
    live.ctx.transcodes.manager().stop_session("endedsession")  # as a Stopped report or an idle kill does
    assert first.closed
    _media(_fetch(segments[1]), "mpegts")
    second = _job(live, "endedsession")
    assert second is not first and not second.closed
    assert plans.count("endedsession") == 3  # master, main, and the segment that found no job


def test_settings_reach_the_running_manager_through_the_configuration_listener(live, plans):
    transcodes = live.ctx.transcodes
    url = _with(_transcoding_url(live, "Remux Clip", browser_profile()), PlaySessionId="settingssession")
    _, _, segments, _ = _open(live, url)
    _fetch(segments[0])
    manager = transcodes.manager()
    generation = transcodes.settings.generation
    _set_transcoding(live, IdleTimeoutSeconds=45, ThrottleAheadSegments=7)
    try:
        # applied when saved, before any HLS request
        assert manager.idle_timeout == 45 and manager.throttle_ahead_segments == 7
        assert transcodes.settings.generation == generation + 1
        # the next segment plans once under the new settings and keeps the job (same stream)
        job = _job(live, "settingssession")
        planned = len(plans)
        _fetch(segments[1])
        _fetch(segments[2])
        assert len(plans) == planned + 1
        assert _job(live, "settingssession") is job and len(job.runs) == 1
    finally:
        _set_transcoding(live, IdleTimeoutSeconds=60, ThrottleAheadSegments=30)
    assert manager.idle_timeout == 60 and manager.throttle_ahead_segments == 30
