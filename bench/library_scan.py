"""Library scan benchmark on synthetic libraries, against a real Reelroom server.

Prints, per library size and kind (audio, video):
- first-scan files/s (POST /Library/VirtualFolders?refreshLibrary=true until the RefreshLibrary
  task has finished), with a sanity check that every file really was probed;
- unchanged-rescan seconds (POST /Library/Refresh), checking that nothing was probed;
- seconds from copying a new file into the library to the item being visible in /Items
  (GET /Items?Ids=...; the database is asked when this branch has no /Items yet).

Synthetic libraries copy a few tiny real files (made with ffmpeg) under many names: hard links
where the file system allows it (no disk space, but every name is still opened and probed).

    python bench/library_scan.py [--sizes 10000,100000] [--kinds audio,video] [--work /tmp/reelroom-bench]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import complete_wizard, start_server, stop_server  # noqa: E402
from tests.library_helpers import add_library_and_scan, refresh_and_wait  # noqa: E402
from tests.mediagen import make_audio, make_video  # noqa: E402

SOURCES = 24  # distinct source files per kind (distinct tags -> distinct artists/albums)
TRACKS_PER_ALBUM = 10
ALBUMS_PER_ARTIST = 10


def _link(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def make_sources(work: Path, kind: str) -> list[Path]:
    folder = work / f"sources-{kind}"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(SOURCES):
        if kind == "audio":
            path = folder / f"src{i:02d}.mp3"
            if not path.exists():
                make_audio(path, seconds=0.5, frequency=300 + i * 10, tags={
                    "title": f"Song {i}", "artist": f"Artist {i % 12}", "album_artist": f"Artist {i % 12}",
                    "album": f"Album {i}", "track": str(i % 10 + 1), "date": str(1990 + i), "genre": "Rock"})
        else:
            path = folder / f"src{i:02d}.mkv"
            if not path.exists():
                make_video(path, seconds=0.5, width=64, height=48, fps=5, tags={"title": f"Clip {i}"})
        out.append(path)
    return out


def build_library(work: Path, kind: str, size: int) -> Path:
    lib = work / f"{kind}-{size}"
    marker = lib / ".complete"
    if marker.exists():
        return lib
    if lib.exists():
        shutil.rmtree(lib)
    sources = make_sources(work, kind)
    t0 = time.monotonic()
    for n in range(size):
        if kind == "audio":
            album = n // TRACKS_PER_ALBUM
            artist = album // ALBUMS_PER_ARTIST
            folder = lib / f"Artist {artist:05d}" / f"Album {album:06d}"
            name = f"{n % TRACKS_PER_ALBUM + 1:02d} - Track {n}.mp3"
            src = sources[album % SOURCES]
        else:
            folder = lib / f"Movie {n:06d} ({1950 + n % 70})"
            name = f"Movie {n:06d} ({1950 + n % 70}).mkv"
            src = sources[n % SOURCES]
        if n % TRACKS_PER_ALBUM == 0 or kind != "audio":
            folder.mkdir(parents=True, exist_ok=True)
        _link(src, folder / name)
    marker.write_text("ok")
    print(f"  built {kind} library of {size} files in {time.monotonic() - t0:.1f} s", flush=True)
    return lib


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and its live child processes (the probe
    workers), so that a figure can be read apart from other load on the machine."""
    total = sum(os.times()[:2])
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    me = os.getpid()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def visible_seconds(live, lib: Path, kind: str, sources: list[Path], rounds: int = 3) -> list[float]:
    from server.db.tables import Item
    from server.library.catalog import ids

    out = []
    for r in range(rounds):
        if kind == "audio":
            target = lib / "Artist 00000" / f"Bench Album {r}" / "01 - New.mp3"
        else:
            target = lib / f"New Movie {r} (2024)" / f"New Movie {r} (2024).mkv"
        target.parent.mkdir(parents=True, exist_ok=True)
        time.sleep(0.5)
        item_id = ids.item_id_for_path(str(target))
        t0 = time.monotonic()
        shutil.copyfile(sources[r], target)
        with live.admin() as c:
            via = "db"
            while time.monotonic() - t0 < 30:
                r_items = c.get("/Items", params={"Ids": item_id, "Recursive": "true"})
                if r_items.status_code == 200:
                    via = "/Items"
                    if any(i.get("Id") == item_id for i in r_items.json().get("Items", [])):
                        break
                elif live.ctx.db.read_sync(lambda s, i=item_id: s.get(Item, i)) is not None:
                    break
                time.sleep(0.02)
            else:
                raise TimeoutError(f"{target} did not show up")
        out.append(time.monotonic() - t0)
        print(f"    copy -> visible ({via}): {out[-1]:.2f} s", flush=True)
        shutil.rmtree(target.parent)
    return out


def run(work: Path, kind: str, size: int, kept_counts: bool = True) -> dict:
    lib = build_library(work, kind, size)
    data = work / f"data-{kind}-{size}"
    if data.exists():
        shutil.rmtree(data)
    live = start_server(data)
    try:
        complete_wizard(live)
        if not kept_counts:  # the kept-count triggers (0010_kept_counts) off, to measure what they cost
            from server.library.catalog import facets

            with live.ctx.db.engine.begin() as conn:
                facets.drop_triggers(conn)
        cpu0, load0 = cpu_seconds(), os.getloadavg()[0]
        t0 = time.monotonic()
        lib_id = add_library_and_scan(live, f"Bench {kind}", "music" if kind == "audio" else "movies", [lib],
                                      timeout=3600)
        first = time.monotonic() - t0
        cpu, load = cpu_seconds() - cpu0, max(load0, os.getloadavg()[0])
        stats = live.ctx.scanner.last_stats[lib_id]
        assert stats.probed == stats.files == size, (stats.probed, stats.files, size)
        print(f"  first scan: {size} files in {first:.1f} s = {size / first:.0f} files/s "
              f"(probed {stats.probed}; phases {', '.join(f'{k} {v:.1f}s' for k, v in stats.phases.items())})",
              flush=True)
        print(f"    CPU {cpu:.0f} s = {size / cpu:.0f} files per CPU-second; load average {load:.1f} on "
              f"{os.cpu_count()} CPUs (other work on the machine slows the wall-clock figure)", flush=True)
        t1 = time.monotonic()
        refresh_and_wait(live, timeout=600)
        unchanged = time.monotonic() - t1
        stats = live.ctx.scanner.last_stats[lib_id]
        assert stats.probed == 0 and stats.written == 0, stats
        print(f"  unchanged rescan: {unchanged:.2f} s (probed 0, written 0; phases "
              f"{', '.join(f'{k} {v:.2f}s' for k, v in stats.phases.items())})", flush=True)
        visible = visible_seconds(live, lib, kind, make_sources(work, kind))
        return {"files_per_s": size / first, "files_per_cpu_s": size / cpu, "unchanged_s": unchanged,
                "visible_s": max(visible)}
    finally:
        stop_server(live)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--kinds", default="audio,video")
    parser.add_argument("--work", default="/tmp/reelroom-bench")
    parser.add_argument("--keep", action="store_true", help="keep the generated libraries")
    parser.add_argument("--kept-counts", choices=("on", "off", "both"), default="on",
                        help="scan with the kept-count triggers (on), without them (off), or both, one after "
                        "the other, to print what they cost")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results = {}
    for size in [int(s) for s in args.sizes.split(",")]:
        for kind in args.kinds.split(","):
            for kept in {"on": (True,), "off": (False,), "both": (True, False)}[args.kept_counts]:
                label = "" if args.kept_counts == "on" else (" with kept-count triggers" if kept else
                                                             " without kept-count triggers")
                print(f"{kind} library, {size} files{label} (cpus: {os.cpu_count()})", flush=True)
                results[(kind, size, label)] = run(work, kind, size, kept)
    print("\nsummary")
    for (kind, size, label), r in results.items():
        print(f"  {kind:5s} {size:>7d}{label}: first scan {r['files_per_s']:7.0f} files/s "
              f"({r['files_per_cpu_s']:.0f} per CPU-s) | unchanged rescan "
              f"{r['unchanged_s']:6.2f} s | copy -> visible {r['visible_s']:.2f} s")
    if not args.keep:
        for (kind, size, _label) in results:
            shutil.rmtree(work / f"{kind}-{size}", ignore_errors=True)


if __name__ == "__main__":
    main()
