"""Subtitles, lyrics, attachments and media segments against a real server with a scanned,
ffmpeg-generated library: extraction of embedded text subtitles, sidecars, conversion between
formats with time windows, the HLS subtitle playlist, upload and delete, fallback fonts, LRC and
embedded lyrics, a font attachment, and intro/outro segments from chapter names."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import mutagen.flac
import mutagen.id3
import pysubs2
import pytest

from server.subtitles.lyrics import parse_lrc
from server.subtitles.service import convert_text
from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan
from tests.mediagen import ffmpeg_binary, make_audio, make_video

TICKS = 10_000_000
ASS = """[Script Info]
ScriptType: v4.00+
PlayResX: 384
PlayResY: 288

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,Reelroom Sans,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:00.50,0:00:01.50,Default,,0,0,0,,First styled line
Dialogue: 0,0:00:02.00,0:00:03.00,Default,,0,0,0,,Second styled line
"""
SRT = "1\n00:00:00,500 --> 00:00:01,500\nHello from a sidecar\n\n2\n00:00:02,000 --> 00:00:03,500\nSecond line\n\n"
LRC = "[ar:The Band]\n[ti:Tuned]\n[offset:+500]\n[00:01.00]First line\n[00:02.50][00:04.00]Chorus\n"


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("subs-media")
    movies, music = root / "Movies", root / "Music"
    files: dict[str, Path] = {"movies": movies, "music": music}
    files["embedded"] = make_video(movies / "Talk (2010)" / "Talk (2010).mkv", seconds=4,
                                   subtitles=[("eng", "Embedded hello"), ("fre", "Bonjour")], chapters=True)
    sidecar = make_video(movies / "Quiet (2011)" / "Quiet (2011).mp4", seconds=4)
    sidecar.with_name("Quiet (2011).en.srt").write_text(SRT, encoding="utf-8")
    files["sidecar"] = sidecar
    # An MKV with an ASS track and the font it uses as an attachment.
    plain = make_video(root / "plain.mkv", seconds=4)
    ass = root / "styled.ass"
    ass.write_text(ASS, encoding="utf-8")
    font = root / "ReelroomSans.ttf"
    font.write_bytes(b"\x00\x01\x00\x00" + b"FAKEFONT" * 64)
    styled = movies / "Styled (2012)" / "Styled (2012).mkv"
    styled.parent.mkdir(parents=True)
    subprocess.run([ffmpeg_binary(), "-v", "error", "-i", str(plain), "-i", str(ass), "-attach", str(font),
                    "-metadata:s:t", "mimetype=application/x-truetype-font", "-map", "0", "-map", "1",
                    "-c", "copy", "-y", str(styled)], check=True)
    files["styled"], files["font"] = styled, font
    # Music: an .lrc sidecar, USLT in an mp3, LRC text in a FLAC's LYRICS tag.
    tags = {"artist": "The Band", "album": "Songs"}
    files["lrc"] = make_audio(music / "The Band" / "Songs" / "01 - Tuned.mp3", seconds=2, tags={**tags, "title": "Tuned", "track": "1"})
    files["lrc"].with_suffix(".lrc").write_text(LRC, encoding="utf-8")
    uslt = make_audio(music / "The Band" / "Songs" / "02 - Plain.mp3", seconds=2, tags={**tags, "title": "Plain", "track": "2"})
    id3 = mutagen.id3.ID3(uslt)
    id3.add(mutagen.id3.USLT(encoding=3, lang="eng", desc="", text="Line one\nLine two"))
    id3.save()
    flac = make_audio(music / "The Band" / "Songs" / "03 - Timed.flac", seconds=2, tags={**tags, "title": "Timed", "track": "3"})
    audio = mutagen.flac.FLAC(flac)
    audio["LYRICS"] = "[00:00.50]Timed one\n[00:01.25]Timed two"
    audio.save()
    make_audio(music / "The Band" / "Songs" / "04 - Silent.mp3", seconds=2, tags={**tags, "title": "Silent", "track": "4"})
    fonts = root / "fonts"
    fonts.mkdir()
    (fonts / "Fallback.ttf").write_bytes(b"\x00\x01\x00\x00fallback")
    (fonts / "notes.txt").write_text("not a font")
    files["fonts"] = fonts
    return files


@pytest.fixture(scope="module")
def live(tmp_path_factory, media) -> LiveServer:
    server = start_server(tmp_path_factory.mktemp("subs-server") / "data")
    complete_wizard(server)
    add_library_and_scan(server, "Movies", "movies", [media["movies"]])
    add_library_and_scan(server, "Music", "music", [media["music"]])
    yield server
    stop_server(server)


def _item(live: LiveServer, name: str) -> dict:
    with live.admin() as c:
        items = c.get("/Items", params={"recursive": "true", "includeItemTypes": "Movie,Audio",
                                        "fields": "MediaStreams,Chapters"}).json()["Items"]
    return next(i for i in items if i["Name"] == name)


def _subs(item: dict) -> list[dict]:
    return [s for s in item["MediaStreams"] if s["Type"] == "Subtitle"]


def test_embedded_subtitles_are_extracted_and_converted(live):
    item = _item(live, "Talk")
    eng = next(s for s in _subs(item) if s.get("Language") == "eng")
    base = f"/Videos/{item['Id']}/{item['Id']}/Subtitles/{eng['Index']}"
    with live.client() as anonymous:  # subtitle files are fetched without headers by players
        srt = anonymous.get(f"{base}/Stream.srt")
        assert srt.status_code == 200 and srt.headers["content-type"].startswith("application/x-subrip")
        cue = pysubs2.SSAFile.from_string(srt.text).events[0]
        assert cue.plaintext == "Embedded hello" and cue.start < 100 and cue.end - cue.start == 1000
        vtt = anonymous.get(f"{base}/Stream.vtt", params={"addVttTimeMap": "true"})
        assert vtt.headers["content-type"].startswith("text/vtt")
        assert vtt.text.startswith("WEBVTT") and "X-TIMESTAMP-MAP=MPEGTS:900000" in vtt.text
        assert "Embedded hello" in vtt.text
        ass = anonymous.get(f"{base}/Stream.ass")
        assert "[Events]" in ass.text and "Embedded hello" in ass.text
        assert anonymous.get(f"{base}/Stream.xyz").status_code == 400
        assert anonymous.get(f"/Videos/{item['Id']}/{item['Id']}/Subtitles/99/Stream.srt").status_code == 404
    cached = list((live.data_dir / "cache" / "subtitles").rglob(f"{item['Id']}-{eng['Index']}-*"))
    assert len(cached) == 1  # extracted once, then served from the cache


def test_sidecar_window_and_shift(live):
    item = _item(live, "Quiet")
    stream = next(s for s in _subs(item) if s.get("IsExternal"))
    base = f"/Videos/{item['Id']}/{item['Id']}/Subtitles/{stream['Index']}"
    with live.client() as anonymous:
        shifted = pysubs2.SSAFile.from_string(anonymous.get(f"{base}/{2 * TICKS}/Stream.srt").text)
        assert [(e.start, e.end, e.plaintext) for e in shifted.events] == [(0, 1500, "Second line")]
        kept = pysubs2.SSAFile.from_string(
            anonymous.get(f"{base}/{2 * TICKS}/Stream.srt", params={"copyTimestamps": "true"}).text)
        assert [(e.start, e.end) for e in kept.events] == [(2000, 3500)]
        window = pysubs2.SSAFile.from_string(
            anonymous.get(f"{base}/Stream.vtt", params={"endPositionTicks": 1 * TICKS}).text)
        assert [e.plaintext for e in window.events] == ["Hello from a sidecar"]


def test_track_events_json_for_jellyfin_web(live):
    """jellyfin-web fetches ``Stream.js`` (Jellyfin's JSON track events) and draws the cues itself."""
    item = _item(live, "Quiet")
    stream = next(s for s in _subs(item) if s.get("IsExternal"))
    base = f"/Videos/{item['Id']}/{item['Id']}/Subtitles/{stream['Index']}"
    with live.client() as anonymous:
        r = anonymous.get(f"{base}/0/Stream.js")
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        assert r.json() == {"TrackEvents": [
            {"Id": "1", "Text": "Hello from a sidecar", "StartPositionTicks": 5_000_000, "EndPositionTicks": 15_000_000},
            {"Id": "2", "Text": "Second line", "StartPositionTicks": 20_000_000, "EndPositionTicks": 35_000_000}]}
        shifted = anonymous.get(f"{base}/{2 * TICKS}/Stream.js").json()["TrackEvents"]
        assert [(e["Text"], e["StartPositionTicks"]) for e in shifted] == [("Second line", 0)]
    styled = convert_text("1\n00:00:01,000 --> 00:00:02,000\n<i>a < b</i>\nnext\n\n", "json")
    assert '"Text": "a &lt; b\\nnext"' in styled


def test_ass_track_and_font_attachment(live, media):
    item = _item(live, "Styled")
    ass = next(s for s in _subs(item) if (s.get("Codec") or "").lower() in ("ass", "ssa"))
    with live.client() as anonymous:
        text = anonymous.get(f"/Videos/{item['Id']}/{item['Id']}/Subtitles/{ass['Index']}/Stream.ass").text
        assert "Reelroom Sans" in text and "First styled line" in text
        srt = anonymous.get(f"/Videos/{item['Id']}/{item['Id']}/Subtitles/{ass['Index']}/Stream.srt").text
        assert "First styled line" in srt and "00:00:00,500 --> 00:00:01,500" in srt
        attachment_index = ass["Index"] + 1  # video, audio, subtitle, then the attachment
        font = anonymous.get(f"/Videos/{item['Id']}/{item['Id']}/Attachments/{attachment_index}")
        assert font.status_code == 200 and font.content == media["font"].read_bytes()
        assert font.headers["content-type"] == "application/x-truetype-font"
        assert anonymous.get(f"/Videos/{item['Id']}/{item['Id']}/Attachments/0").status_code == 404


def test_subtitle_playlist(live):
    item = _item(live, "Quiet")
    stream = next(s for s in _subs(item) if s.get("IsExternal"))
    with live.admin() as c:
        r = c.get(f"/Videos/{item['Id']}/{item['Id']}/Subtitles/{stream['Index']}/subtitles.m3u8",
                  params={"segmentLength": 2})
        assert r.status_code == 200 and r.text.startswith("#EXTM3U")
        segments = [line for line in r.text.splitlines() if line and not line.startswith("#")]
        assert len(segments) == 2 and "#EXT-X-ENDLIST" in r.text
        second = c.get(segments[1])
        assert second.status_code == 200 and "Second line" in second.text
        assert c.get(f"/Videos/{item['Id']}/{item['Id']}/Subtitles/42/subtitles.m3u8").status_code == 404


def test_upload_and_delete(live):
    item = _item(live, "Talk")
    body = {"Language": "de", "Format": "srt", "IsForced": True,
            "Data": base64.b64encode(b"1\n00:00:01,000 --> 00:00:02,000\nHallo\n\n").decode()}
    with live.admin() as c:
        assert c.post(f"/Videos/{item['Id']}/Subtitles", json={**body, "Data": "not base64!"}).status_code == 400
        assert c.post(f"/Videos/{item['Id']}/Subtitles", json={**body, "Format": "pgs"}).status_code == 400
        assert c.post(f"/Videos/{item['Id']}/Subtitles", json=body).status_code == 204
        added = next(s for s in _subs(_item(live, "Talk")) if s.get("Language") == "de")
        assert added["IsExternal"] and added["IsForced"] and Path(added["Path"]).name == "Talk (2010).de.forced.srt"
        text = c.get(f"/Videos/{item['Id']}/{item['Id']}/Subtitles/{added['Index']}/Stream.vtt").text
        assert "Hallo" in text
        embedded = next(s for s in _subs(item) if not s.get("IsExternal"))
        assert c.delete(f"/Videos/{item['Id']}/Subtitles/{embedded['Index']}").status_code == 400
        assert c.delete(f"/Videos/{item['Id']}/Subtitles/{added['Index']}").status_code == 204
        assert not Path(added["Path"]).exists()
        assert all(s.get("Language") != "de" for s in _subs(_item(live, "Talk")))
    with live.client() as anonymous:
        assert anonymous.post(f"/Videos/{item['Id']}/Subtitles", json=body).status_code == 401


def test_fallback_fonts(live, media):
    with live.admin() as c:
        assert c.get("/FallbackFont/Fonts").json() == []
        encoding = c.get("/System/Configuration/encoding").json()
        encoding.update(EnableFallbackFont=True, FallbackFontPath=str(media["fonts"]))
        assert c.post("/System/Configuration/encoding", json=encoding).status_code == 204
        fonts = c.get("/FallbackFont/Fonts").json()
        assert [f["Name"] for f in fonts] == ["Fallback.ttf"] and fonts[0]["Size"] == 12
        assert c.get("/FallbackFont/Fonts/Fallback.ttf").content == b"\x00\x01\x00\x00fallback"
        assert c.get("/FallbackFont/Fonts/notes.txt").status_code == 404
        assert c.get("/FallbackFont/Fonts/..%2F..%2Fetc%2Fpasswd").status_code == 404


def test_lyrics(live):
    with live.admin() as c:
        tuned = c.get(f"/Audio/{_item(live, 'Tuned')['Id']}/Lyrics").json()
        assert tuned["Metadata"]["IsSynced"] is True and tuned["Metadata"]["Artist"] == "The Band"
        # [offset:+500] brings every line half a second sooner.
        assert [(line["Text"], line["Start"]) for line in tuned["Lyrics"]] == [
            ("First line", 5_000_000), ("Chorus", 20_000_000), ("Chorus", 35_000_000)]
        plain = c.get(f"/Audio/{_item(live, 'Plain')['Id']}/Lyrics").json()
        assert plain["Metadata"]["IsSynced"] is False
        assert [line["Text"] for line in plain["Lyrics"]] == ["Line one", "Line two"]
        timed = c.get(f"/Audio/{_item(live, 'Timed')['Id']}/Lyrics").json()
        assert [(line["Text"], line["Start"]) for line in timed["Lyrics"]] == [
            ("Timed one", 5_000_000), ("Timed two", 12_500_000)]
        silent = _item(live, "Silent")["Id"]
        assert c.get(f"/Audio/{silent}/Lyrics").status_code == 404
        up = c.post(f"/Audio/{silent}/Lyrics", params={"fileName": "silent.lrc"},
                    content=b"[00:00.10]Now it sings", headers={"Content-Type": "text/plain"})
        assert up.status_code == 200 and up.json()["Lyrics"][0]["Start"] == 1_000_000
        assert c.get(f"/Audio/{silent}/Lyrics").json()["Lyrics"][0]["Text"] == "Now it sings"
        assert c.delete(f"/Audio/{silent}/Lyrics").status_code == 204
        assert c.get(f"/Audio/{silent}/Lyrics").status_code == 404
        assert c.get(f"/Audio/{silent}/RemoteSearch/Lyrics").json() == []
        assert c.get("/Audio/0123456789abcdef0123456789abcdef/Lyrics").status_code == 404


def test_media_segments_from_chapters(live):
    item = _item(live, "Talk")
    with live.admin() as c:
        segments = c.get(f"/MediaSegments/{item['Id']}").json()
        assert [(s["Type"], s["StartTicks"], s["EndTicks"]) for s in segments["Items"]] == [
            ("Intro", 0, 2 * TICKS), ("Outro", 2 * TICKS, item["RunTimeTicks"])]
        only = c.get(f"/MediaSegments/{item['Id']}", params={"includeSegmentTypes": "Outro"}).json()
        assert [s["Type"] for s in only["Items"]] == ["Outro"]
        assert c.get(f"/MediaSegments/{_item(live, 'Quiet')['Id']}").json()["TotalRecordCount"] == 0
        assert c.get("/MediaSegments/0123456789abcdef0123456789abcdef").status_code == 404


def test_lrc_and_conversion_units():
    dto = parse_lrc("[length:03:20.5]\n[00:01.5]a\nplain text ignored when timed")
    assert dto.Metadata.Length == 2_005_000_000 and dto.Lyrics[0].Start == 15_000_000
    text = convert_text(SRT, "vtt", start_ticks=0, end_ticks=None)
    assert text.startswith("WEBVTT") and "00:00:00.500 --> 00:00:01.500" in text
