"""From a walked folder tree (plus probe data) to item rows, with Jellyfin's naming rules.

``walk.walk`` lists a library's folders once (os.scandir, stat of every file). The resolvers turn
that tree into ``ScannedItem``s: the full set of ``items`` columns the scan owns, the
filterable values, and the people from NFO files. Probe data (streams, tags, embedded art)
comes through a callable so that the resolvers stay pure and the scanner decides what is
probed, cached or reused.

The hierarchy (parent_id):
- movies:   CollectionFolder -> [Folder ->] Movie -> extras; alternate versions are Movie rows
            with owner_id = the primary version (same parent).
- tvshows:  CollectionFolder -> Series -> Season -> Episode; extras under the Series.
- music:    CollectionFolder -> MusicArtist -> MusicAlbum -> Audio.
- others:   CollectionFolder -> Folder -> Video / MusicVideo / Audio / Photo / Book.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from server.library.catalog import ids
from server.library.catalog.sorting import episode_sort_name, sort_name
from server.library.scan.naming import (
    ExtraType,
    TrackName,
    classify_extra,
    classify_sidecar_image,
    is_extras_folder,
    parse_episode,
    parse_season_folder,
    parse_series_folder,
    parse_subtitle_file,
    parse_track_filename,
    resolve_movie_folder,
)
from server.library.scan.naming.extensions import (
    AUDIO_EXTENSIONS,
    BOOK_EXTENSIONS,
    PHOTO_EXTENSIONS,
    SIDECAR_IMAGE_EXTENSIONS,
    SUBTITLE_EXTENSIONS,
    VIDEO_EXTENSIONS,
    file_kind,
)
from server.library.scan.naming.extras import THEME_MUSIC_FOLDER
from server.library.scan.naming.kinds import FileKind
from server.library.scan.naming.movies import (
    disc_type_from_entries,
    is_disc_structure_folder,
    parse_movie_name,
)
from server.library.scan.naming.music import parse_disc_folder
from server.library.scan.nfo import NfoMetadata, NfoPerson, parse_nfo
from server.library.scan.walk import FileStat, Folder, Tree
from server.media.streams import SUBTITLE, ProbedStream

log = logging.getLogger("reelroom.scanner")

# What the resolvers produce is versioned by scanner.RESOLVER_VERSION: bump it when they change.

LYRIC_EXTENSIONS = (".lrc", ".elrc", ".txt")


# ----------------------------------------------------------------------------- scanned items


@dataclass(slots=True)
class ScannedItem:
    id: str
    fields: dict[str, Any]
    people: list[NfoPerson] | None = None  # None: the scan knows nothing about people
    media: tuple[str, FileStat] | None = None  # the probed file
    inputs: list[str] = field(default_factory=list)  # files read besides the media (sidecars, NFO)

    @property
    def parent_id(self) -> str | None:
        return self.fields.get("parent_id")


Probe = Callable[[str], dict[str, Any] | None]  # path -> probe data (None: not probed)
Measure = Callable[[str], dict[str, Any] | None]  # image path -> {Width, Height, BlurHash, Tag}


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def _date_time(d: date | None) -> datetime | None:
    return datetime(d.year, d.month, d.day, tzinfo=UTC) if d else None


def _jl(values: Any) -> str:
    return json.dumps(list(dict.fromkeys(v for v in values if v)), ensure_ascii=False)


class Resolver:
    """Turns one library's tree into ScannedItems."""

    def __init__(self, library_id: str, collection_type: str | None, tree: Tree, probe: Probe,
                 measure: Measure) -> None:
        self.library_id = library_id
        self.collection_type = collection_type
        self.tree = tree
        self.probe = probe
        self.measure = measure
        self.items: dict[str, ScannedItem] = {}
        self._nfo_cache: dict[str, NfoMetadata | None] = {}

    # -- helpers ---------------------------------------------------------------------------

    def add(self, item: ScannedItem) -> ScannedItem:
        item.fields.setdefault("library_id", self.library_id)
        self.items[item.id] = item
        return item

    def _stat(self, path: str) -> FileStat | None:
        folder = self.tree.folder(os.path.dirname(path))
        return folder.files.get(os.path.basename(path)) if folder else None

    def nfo(self, path: str, inputs: list[str]) -> NfoMetadata | None:
        if self._stat(path) is None:
            return None
        inputs.append(path)
        if path not in self._nfo_cache:
            self._nfo_cache[path] = parse_nfo(path)
        return self._nfo_cache[path]

    def image_entries(self, found: list[tuple[str, str, int]], inputs: list[str]) -> list[dict[str, Any]]:
        """images_json entries from (path, ImageType, index) sidecar files."""
        out: list[dict[str, Any]] = []
        seen: set[tuple[str, int]] = set()
        backdrop = 0
        for path, kind, _index in sorted(found, key=lambda f: (f[1], f[2], f[0])):
            if kind != "Backdrop" and (kind, 0) in seen:
                continue
            info = self.measure(path)
            if info is None:
                continue
            inputs.append(path)
            entry = {"Type": kind, "Path": path, "Tag": info["Tag"], "Width": info["Width"],
                     "Height": info["Height"], "BlurHash": info["BlurHash"]}
            if kind == "Backdrop":
                entry["Index"] = backdrop
                backdrop += 1
            seen.add((kind, 0))
            out.append(entry)
        return out

    def folder_images(self, folder: Folder | None, item_stem: str | None = None, *, prefixed_only: bool = False,
                      episode: bool = False) -> list[tuple[str, str, int]]:
        if folder is None:
            return []
        found: list[tuple[str, str, int]] = []
        for name in folder.files:
            if os.path.splitext(name)[1].lower() not in SIDECAR_IMAGE_EXTENSIONS:
                continue
            path = os.path.join(folder.path, name)
            if prefixed_only:
                if not item_stem or not name.lower().startswith(item_stem.lower()):
                    continue
            side = classify_sidecar_image(path, item_stem, episode=episode)
            if side is None or side.season is not None:
                continue
            found.append((path, str(side.image_type), side.index))
        return found

    def media_fields(self, path: str, st: FileStat, is_audio: bool, item_id: str, inputs: list[str]) -> dict[str, Any]:
        """Technical columns of a media file: probe results plus sidecar subtitles."""
        data = self.probe(path) or {}
        streams = [dict(s) for s in data.get("Streams") or []]
        fields: dict[str, Any] = {
            "path": path, "size": st.size, "file_size": st.size, "file_mtime": st.mtime,
            "date_modified": _utc(st.mtime), "date_created": _utc(min(st.ctime, st.mtime) if st.ctime else st.mtime),
            "container": data.get("Container") or os.path.splitext(path)[1].lstrip(".").lower() or None,
            "bitrate": data.get("Bitrate"), "run_time_ticks": data.get("RunTimeTicks"),
            "chapters_json": json.dumps(data.get("Chapters") or []),
            "fingerprint": data.get("Fingerprint"),
        }
        video = next((s for s in streams if s.get("Type") == "Video"), None)
        fields["width"] = video.get("Width") if video else None
        fields["height"] = video.get("Height") if video else None
        if not is_audio:
            streams += self.external_subtitles(path, streams, inputs)
        fields["media_streams_json"] = json.dumps(streams, ensure_ascii=False)
        images: list[dict[str, Any]] = []
        embedded = data.get("EmbeddedImage")
        if embedded:
            images.append({"Type": "Primary", **embedded})
        fields["_embedded_images"] = images
        return fields

    def external_subtitles(self, video_path: str, streams: list[dict[str, Any]], inputs: list[str]) -> list[dict[str, Any]]:
        folder = self.tree.folder(os.path.dirname(video_path))
        if folder is None:
            return []
        stem = os.path.splitext(os.path.basename(video_path))[0]
        next_index = max((s.get("Index", -1) for s in streams), default=-1) + 1
        out: list[dict[str, Any]] = []
        for name in sorted(folder.files):
            if os.path.splitext(name)[1].lower() not in SUBTITLE_EXTENSIONS:
                continue
            sub = parse_subtitle_file(os.path.join(folder.path, name), stem)
            if sub is None:
                continue
            inputs.append(sub.path)
            wire = ProbedStream(index=next_index, type=SUBTITLE, codec=sub.codec, language=sub.language,
                                title=sub.title, is_default=sub.is_default, is_forced=sub.is_forced,
                                is_hearing_impaired=sub.is_hearing_impaired, is_external=True).to_wire()
            wire["Path"] = sub.path
            wire["SupportsExternalStream"] = True
            out.append(wire)
            next_index += 1
        return out

    def apply_nfo(self, fields: dict[str, Any], nfo: NfoMetadata | None) -> list[NfoPerson] | None:
        if nfo is None:
            return None
        if nfo.title:
            fields["name"] = nfo.title
        if nfo.original_title:
            fields["original_title"] = nfo.original_title
        if nfo.sort_title:
            fields["forced_sort_name"] = nfo.sort_title
        for key, value in (("overview", nfo.overview), ("tagline", nfo.tagline),
                           ("official_rating", nfo.official_rating), ("community_rating", nfo.community_rating),
                           ("critic_rating", nfo.critic_rating)):
            if value is not None:
                fields[key] = value
        if nfo.premiere_date:
            fields["premiere_date"] = _date_time(nfo.premiere_date)
        if nfo.end_date:
            fields["end_date"] = _date_time(nfo.end_date)
        year = nfo.year or (nfo.premiere_date.year if nfo.premiere_date else None)
        if year:
            fields["production_year"] = year
        if nfo.genres:
            fields["genres_json"] = _jl(nfo.genres)
        if nfo.studios:
            fields["studios_json"] = _jl(nfo.studios)
        if nfo.tags:
            fields["tags_json"] = _jl(nfo.tags)
        if nfo.provider_ids:
            merged = {**json.loads(fields.get("provider_ids_json") or "{}"), **nfo.provider_ids}
            fields["provider_ids_json"] = json.dumps(merged, sort_keys=True)
        if nfo.runtime_minutes and not fields.get("run_time_ticks"):
            fields["run_time_ticks"] = nfo.runtime_minutes * 60 * 10_000_000
        return list(nfo.people)

    def finish(self, item: ScannedItem, images: list[dict[str, Any]] | None = None) -> ScannedItem:
        f = item.fields
        embedded = f.pop("_embedded_images", [])
        merged = list(images or [])
        have = {i["Type"] for i in merged}
        merged += [i for i in embedded if i["Type"] not in have]
        f["images_json"] = json.dumps(merged, ensure_ascii=False)
        f.setdefault("sort_name", sort_name(f.get("forced_sort_name") or f.get("name")))
        return self.add(item)

    # -- entry -----------------------------------------------------------------------------

    def resolve(self) -> dict[str, ScannedItem]:
        kind = self.collection_type
        for root in self.tree.roots:
            if self.tree.folder(root) is None:
                continue
            if kind == "movies":
                self.movies_in(root, self.library_id, is_root=True)
            elif kind == "tvshows":
                self.shows_in(root)
            elif kind == "music":
                self.music_in(root)
            else:
                self.generic_in(root, self.library_id)
        return self.items

    # -- movies ----------------------------------------------------------------------------

    def movies_in(self, path: str, parent_id: str, *, is_root: bool = False) -> bool:
        """Resolve one folder of a movie library; True when it produced any item."""
        folder = self.tree.folder(path)
        if folder is None:
            return False
        if not is_root:
            disc = disc_type_from_entries([*folder.dirs, *folder.files])
            if disc is not None:
                self.disc_movie(folder, parent_id, str(disc))
                return True
        extra_dirs = [d for d in folder.dirs if is_extras_folder(d) or d.lower() == THEME_MUSIC_FOLDER]
        other_dirs = [d for d in folder.dirs if d not in extra_dirs and not is_disc_structure_folder(d)]
        videos = [os.path.join(path, n) for n in folder.files
                  if file_kind(n, "movies") == FileKind.VIDEO]
        extra_files: list[str] = []
        for d in extra_dirs:
            extra_files += [p for p, _ in self.tree.files_under(os.path.join(path, d))
                            if file_kind(p, "movies") in (FileKind.VIDEO, FileKind.AUDIO)]
        extra_files += [os.path.join(path, n) for n in folder.files
                        if file_kind(n, "movies") == FileKind.AUDIO and classify_extra(os.path.join(path, n))]
        resolved = resolve_movie_folder(videos + extra_files, folder_name=os.path.basename(path))
        produced = False
        own_folder = not is_root and len(resolved.movies) == 1
        container_id = parent_id
        folder_item: ScannedItem | None = None
        if not is_root and len(resolved.movies) > 1:
            folder_item = self.folder_item(folder, parent_id)
            container_id = folder_item.id
        for movie in resolved.movies:
            self.movie(folder, movie, container_id, own_folder=own_folder)
            produced = True
        child_parent = container_id if not own_folder else parent_id
        if not own_folder and folder_item is None and not is_root and other_dirs:
            # A plain folder of folders: show it as a Folder only if something is inside.
            candidate = self.folder_item(folder, parent_id, register=False)
            if any([self.movies_in(os.path.join(path, d), candidate.id) for d in other_dirs]):
                self.finish(candidate, self.image_entries(self.folder_images(folder), candidate.inputs))
                return True
            return produced
        for d in other_dirs:
            produced = self.movies_in(os.path.join(path, d), child_parent) or produced
        return produced

    def folder_item(self, folder: Folder, parent_id: str, *, register: bool = True, item_type: str = "Folder") -> ScannedItem:
        name = os.path.basename(folder.path)
        item = ScannedItem(id=ids.item_id_for_path(folder.path), fields={
            "type": item_type, "media_type": "Unknown", "is_folder": True, "parent_id": parent_id,
            "path": folder.path, "name": name})
        if register:
            self.finish(item, self.image_entries(self.folder_images(folder), item.inputs))
        return item

    def disc_movie(self, folder: Folder, parent_id: str, video_type: str) -> None:
        parsed = parse_movie_name(folder.path, is_directory=True)
        item = ScannedItem(id=ids.item_id_for_path(folder.path), fields={
            "type": "Movie", "media_type": "Video", "is_folder": False, "parent_id": parent_id,
            "path": folder.path, "name": parsed.title, "production_year": parsed.year,
            "video_type": video_type, "provider_ids_json": json.dumps(parsed.provider_ids, sort_keys=True)})
        item.people = self.apply_nfo(item.fields, self.nfo(os.path.join(folder.path, "movie.nfo"), item.inputs)
                                     or self.nfo(os.path.join(folder.path, os.path.basename(folder.path) + ".nfo"),
                                                 item.inputs))
        self.finish(item, self.image_entries(self.folder_images(folder), item.inputs))

    def movie(self, folder: Folder, movie: Any, parent_id: str, *, own_folder: bool) -> None:
        primary = movie.primary.parts[0]
        stem = os.path.splitext(os.path.basename(primary))[0]
        st = self._stat(primary)
        item = ScannedItem(id=ids.item_id_for_path(primary), fields={}, media=(primary, st))
        f = item.fields
        f.update(self.media_fields(primary, st, False, item.id, item.inputs))
        f.update({"type": "Movie", "media_type": "Video", "is_folder": False, "parent_id": parent_id,
                  "name": movie.title, "production_year": movie.year, "video_type": "VideoFile",
                  "provider_ids_json": json.dumps(movie.provider_ids, sort_keys=True)})
        nfo = self.nfo(os.path.join(folder.path, stem + ".nfo"), item.inputs)
        if nfo is None and own_folder:
            nfo = self.nfo(os.path.join(folder.path, "movie.nfo"), item.inputs)
        item.people = self.apply_nfo(f, nfo)
        if not f.get("production_year") and f.get("premiere_date"):
            f["production_year"] = f["premiere_date"].year
        found = self.folder_images(folder, stem, prefixed_only=not own_folder)
        self.finish(item, self.image_entries(found, item.inputs))
        for version in movie.versions[1:]:
            vpath = version.parts[0]
            vst = self._stat(vpath)
            v = ScannedItem(id=ids.item_id_for_path(vpath), fields={}, media=(vpath, vst))
            v.fields.update(self.media_fields(vpath, vst, False, v.id, v.inputs))
            v.fields.update({"type": "Movie", "media_type": "Video", "is_folder": False, "parent_id": parent_id,
                             "name": f["name"], "production_year": f.get("production_year"),
                             "video_type": "VideoFile", "owner_id": item.id,
                             "provider_ids_json": f["provider_ids_json"]})
            self.finish(v)
        for extra in movie.extras:
            self.extra(extra.path, extra.extra_type, extra.title, item.id)

    def extra(self, path: str, extra_type: ExtraType, title: str, owner_id: str) -> None:
        st = self._stat(path)
        if st is None:
            return
        is_audio = os.path.splitext(path)[1].lower() in AUDIO_EXTENSIONS and extra_type == ExtraType.THEME_SONG
        item = ScannedItem(id=ids.item_id_for_path(path), fields={}, media=(path, st))
        item.fields.update(self.media_fields(path, st, is_audio, item.id, item.inputs))
        kind = "Trailer" if extra_type == ExtraType.TRAILER else ("Audio" if is_audio else "Video")
        item.fields.update({"type": kind, "media_type": "Audio" if is_audio else "Video", "is_folder": False,
                            "parent_id": owner_id, "owner_id": owner_id, "extra_type": str(extra_type),
                            "name": title, "video_type": None if is_audio else "VideoFile"})
        self.finish(item)

    # -- tv shows --------------------------------------------------------------------------

    def shows_in(self, root: str) -> None:
        folder = self.tree.folder(root)
        for d in folder.dirs:
            self.series(os.path.join(root, d))
        for name in folder.files:  # loose files at the root: plain videos
            path = os.path.join(root, name)
            if file_kind(name, "tvshows") == FileKind.VIDEO:
                self.plain_file(path, self.library_id, "Video")

    def series(self, path: str) -> None:
        folder = self.tree.folder(path)
        parsed = parse_series_folder(path)
        series = ScannedItem(id=ids.item_id_for_path(path), fields={
            "type": "Series", "media_type": "Unknown", "is_folder": True, "parent_id": self.library_id,
            "path": path, "name": parsed.title, "production_year": parsed.year,
            "provider_ids_json": json.dumps(parsed.provider_ids, sort_keys=True)})
        series_nfo = self.nfo(os.path.join(path, "tvshow.nfo"), series.inputs)
        series.people = self.apply_nfo(series.fields, series_nfo)
        if series_nfo is not None and series_nfo.status:
            status = series_nfo.status.strip().capitalize()
            series.fields["status"] = status if status in ("Continuing", "Ended", "Unreleased") else None
        series_name = series.fields["name"]
        episodes: list[tuple[str, FileStat, int, Any]] = []  # path, stat, season, info
        season_dirs: dict[int, str] = {}
        extras: list[tuple[str, ExtraType]] = []
        stack = [(path, None)]
        while stack:
            current, folder_season = stack.pop()
            cf = self.tree.folder(current)
            if cf is None:
                continue
            for d in cf.dirs:
                sub = os.path.join(current, d)
                if is_extras_folder(d) or d.lower() == THEME_MUSIC_FOLDER:
                    extras += [(p, classify_extra(p) or ExtraType.UNKNOWN) for p, _ in self.tree.files_under(sub)
                               if file_kind(p, "tvshows") in (FileKind.VIDEO, FileKind.AUDIO)]
                    continue
                number = parse_season_folder(sub)
                if number is not None and current == path:
                    season_dirs.setdefault(number, sub)
                    stack.append((sub, number))
                else:
                    stack.append((sub, folder_season))
            for name, st in cf.files.items():
                p = os.path.join(current, name)
                if file_kind(name, "tvshows") != FileKind.VIDEO:
                    continue
                extra_type = classify_extra(p)
                if extra_type is not None:
                    extras.append((p, extra_type))
                    continue
                info = parse_episode(p)
                season = folder_season if folder_season is not None else info.season
                if season is None:
                    season = 1
                episodes.append((p, st, season, info))
        if not episodes and not extras:
            return
        self.finish(series, self.image_entries(self.folder_images(folder), series.inputs))
        seasons: dict[int, ScannedItem] = {}
        for number in sorted({s for _, _, s, _ in episodes}):
            spath = season_dirs.get(number) or os.path.join(path, "Specials" if number == 0 else f"Season {number}")
            season_item = ScannedItem(id=ids.item_id_for_path(spath), fields={
                "type": "Season", "media_type": "Unknown", "is_folder": True, "parent_id": series.id,
                "path": season_dirs.get(number), "name": "Specials" if number == 0 else f"Season {number}",
                "index_number": number, "series_id": series.id, "series_name": series_name,
                "sort_name": f"{number:04d}"})
            sfolder = self.tree.folder(season_dirs[number]) if number in season_dirs else None
            if sfolder is not None:
                season_item.people = self.apply_nfo(
                    season_item.fields, self.nfo(os.path.join(sfolder.path, "season.nfo"), season_item.inputs))
            found = self.folder_images(sfolder)
            for name in folder.files:
                side = classify_sidecar_image(os.path.join(path, name))
                if side is not None and side.season == number:
                    found.append((os.path.join(path, name), str(side.image_type), side.index))
            season_item.fields["series_id"] = series.id
            self.finish(season_item, self.image_entries(found, season_item.inputs))
            seasons[number] = season_item
        for p, st, number, info in episodes:
            self.episode(p, st, info, series, seasons[number])
        for p, extra_type in extras:
            self.extra(p, extra_type, os.path.splitext(os.path.basename(p))[0], series.id)

    def episode(self, path: str, st: FileStat, info: Any, series: ScannedItem, season: ScannedItem) -> None:
        stem = os.path.splitext(os.path.basename(path))[0]
        item = ScannedItem(id=ids.item_id_for_path(path), fields={}, media=(path, st))
        f = item.fields
        f.update(self.media_fields(path, st, False, item.id, item.inputs))
        number = season.fields["index_number"]
        f.update({"type": "Episode", "media_type": "Video", "is_folder": False, "parent_id": season.id,
                  "name": info.title or stem, "index_number": info.episode, "index_number_end": info.episode_end,
                  "parent_index_number": number, "series_id": series.id, "series_name": series.fields["name"],
                  "season_id": season.id, "season_name": season.fields["name"], "video_type": "VideoFile",
                  "premiere_date": _date_time(info.date)})
        if info.date:
            f["production_year"] = info.date.year
        nfo = self.nfo(os.path.join(os.path.dirname(path), stem + ".nfo"), item.inputs)
        item.people = self.apply_nfo(f, nfo)
        if nfo is not None:
            if nfo.episode_number is not None:
                f["index_number"] = nfo.episode_number
            if nfo.episode_number_end is not None:
                f["index_number_end"] = nfo.episode_number_end
        f["sort_name"] = episode_sort_name(number, f["index_number"], f["name"])
        found = self.folder_images(self.tree.folder(os.path.dirname(path)), stem, prefixed_only=True, episode=True)
        self.finish(item, self.image_entries(found, item.inputs))

    # -- music -----------------------------------------------------------------------------

    def music_in(self, root: str) -> None:
        albums: dict[tuple[str, str | None], list[tuple[str, FileStat, dict[str, Any], int | None]]] = {}
        discs: dict[str, int | None] = {}
        for path, st in self.tree.files_under(root):
            if os.path.splitext(path)[1].lower() not in AUDIO_EXTENSIONS or file_kind(path, "music") != FileKind.AUDIO:
                continue
            folder = os.path.dirname(path)
            if folder not in discs:
                discs[folder] = parse_disc_folder(folder) if folder != root else None
            disc_from_folder = discs[folder]
            album_folder = os.path.dirname(folder) if disc_from_folder is not None and os.path.dirname(folder) != root \
                and folder != root else folder
            tags = (self.probe(path) or {}).get("Audio") or {}
            album = tags.get("album") or (os.path.basename(album_folder) if album_folder != root else None)
            albums.setdefault((album_folder, album), []).append((path, st, tags, disc_from_folder))
        per_folder = Counter(folder for folder, _ in albums)
        artists: dict[str, ScannedItem] = {}
        for (album_folder, album_name), tracks in sorted(albums.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
            album_artist_names = Counter(n for _, _, t, _ in tracks for n in (t.get("album_artists") or ())[:1])
            artist_names = Counter(n for _, _, t, _ in tracks for n in (t.get("artists") or ())[:1])
            if album_artist_names:
                artist_name = album_artist_names.most_common(1)[0][0]
            elif len(artist_names) == 1:
                artist_name = next(iter(artist_names))
            elif artist_names:
                artist_name = "Various Artists"
            else:
                artist_name = None
            artist = self.artist(artist_name, album_folder, root, artists) if artist_name else None
            parent_id = artist.id if artist else self.library_id
            album_item: ScannedItem | None = None
            if album_name:
                key = album_folder if per_folder[album_folder] == 1 else f"{album_folder}\x00{album_name}"
                album_item = ScannedItem(id=ids.item_id_for_path(key), fields={
                    "type": "MusicAlbum", "media_type": "Unknown", "is_folder": True, "parent_id": parent_id,
                    "path": album_folder, "name": album_name})
            track_items = [self.track(p, st, t, disc, album_item, album_name, artist_name, parent_id)
                           for p, st, t, disc in tracks]
            if album_item is not None:
                self.album(album_item, track_items, artist_name, album_folder)

    def artist(self, name: str, album_folder: str, root: str, artists: dict[str, ScannedItem]) -> ScannedItem:
        artist_id = ids.by_name_id("MusicArtist", name)
        parent = os.path.dirname(album_folder)
        artist_folder = parent if album_folder != root and parent != root and \
            os.path.basename(parent).casefold() == name.casefold() else None
        existing = artists.get(artist_id)
        if existing is not None:
            if artist_folder and not existing.fields.get("path"):
                existing.fields["path"] = artist_folder
            return existing
        item = ScannedItem(id=artist_id, fields={
            "type": "MusicArtist", "media_type": "Unknown", "is_folder": True, "parent_id": self.library_id,
            "path": artist_folder, "name": name})
        artists[artist_id] = item
        if artist_folder:
            item.people = self.apply_nfo(item.fields, self.nfo(os.path.join(artist_folder, "artist.nfo"), item.inputs))
            images = self.image_entries(self.folder_images(self.tree.folder(artist_folder)), item.inputs)
        else:
            images = []
        item.fields["name"] = name  # the by-name id must keep matching the name
        self.finish(item, images)
        return item

    def track(self, path: str, st: FileStat, tags: dict[str, Any], disc_from_folder: int | None,
              album: ScannedItem | None, album_name: str | None, artist_name: str | None, parent_id: str) -> ScannedItem:
        item = ScannedItem(id=ids.item_id_for_path(path), fields={}, media=(path, st))
        f = item.fields
        f.update(self.media_fields(path, st, True, item.id, item.inputs))
        if tags.get("title") and tags.get("track_number") and tags.get("artists"):
            parsed = TrackName(title=tags["title"], track=tags["track_number"])  # the tags say it all
        else:
            parsed = parse_track_filename(path)
        artists = list(tags.get("artists") or ([parsed.artist] if parsed.artist else []))
        album_artists = list(tags.get("album_artists") or ([artist_name] if artist_name else []))
        year = tags.get("year")
        provider_ids = {k: tags[t] for k, t in (
            ("MusicBrainzAlbum", "musicbrainz_album_id"), ("MusicBrainzArtist", "musicbrainz_artist_id"),
            ("MusicBrainzAlbumArtist", "musicbrainz_album_artist_id"),
            ("MusicBrainzReleaseGroup", "musicbrainz_release_group_id"),
            ("MusicBrainzTrack", "musicbrainz_track_id"), ("MusicBrainzRecording", "musicbrainz_recording_id"))
            if tags.get(t)}
        premiere = None
        date_text = tags.get("date") or ""
        if len(date_text) >= 10:
            try:
                premiere = datetime.fromisoformat(date_text[:10]).replace(tzinfo=UTC)
            except ValueError:
                premiere = None
        f.update({"type": "Audio", "media_type": "Audio", "is_folder": False,
                  "parent_id": album.id if album else parent_id,
                  "name": tags.get("title") or parsed.title, "index_number": tags.get("track_number") or parsed.track,
                  "parent_index_number": tags.get("disc_number") or parsed.disc or disc_from_folder,
                  "album_id": album.id if album else None, "album": album_name,
                  "artists_json": _jl(artists), "album_artists_json": _jl(album_artists),
                  "genres_json": _jl(tags.get("genres") or ()), "production_year": year,
                  "premiere_date": premiere, "provider_ids_json": json.dumps(provider_ids, sort_keys=True),
                  "overview": None})
        if tags.get("composers"):
            item.people = [NfoPerson(name=n, kind="Composer") for n in tags["composers"]]
        folder = self.tree.folder(os.path.dirname(path))
        stem = os.path.splitext(os.path.basename(path))[0]
        for ext in LYRIC_EXTENSIONS:
            name = stem + ext
            if folder is not None and name in folder.files:
                f["lyrics_path"] = os.path.join(folder.path, name)
                item.inputs.append(f["lyrics_path"])
                break
        else:
            f["lyrics_path"] = None
        return self.finish(item)

    def album(self, album: ScannedItem, tracks: list[ScannedItem], artist_name: str | None, folder_path: str) -> None:
        f = album.fields
        tf = [t.fields for t in tracks]
        years = [t["production_year"] for t in tf if t.get("production_year")]
        f["production_year"] = min(years) if years else None
        dates = [t["premiere_date"] for t in tf if t.get("premiere_date")]
        f["premiere_date"] = min(dates) if dates else None
        f["run_time_ticks"] = sum(t.get("run_time_ticks") or 0 for t in tf) or None
        f["album_artists_json"] = _jl([artist_name] if artist_name else [])
        f["artists_json"] = _jl(a for t in tf for a in json.loads(t["artists_json"]))
        f["genres_json"] = _jl(g for t in tf for g in json.loads(t["genres_json"]))
        provider_ids: dict[str, str] = {}
        for t in tf:
            for k, v in json.loads(t["provider_ids_json"]).items():
                if k in ("MusicBrainzAlbum", "MusicBrainzAlbumArtist", "MusicBrainzReleaseGroup"):
                    provider_ids.setdefault(k, v)
        f["provider_ids_json"] = json.dumps(provider_ids, sort_keys=True)
        album.people = self.apply_nfo(f, self.nfo(os.path.join(folder_path, "album.nfo"), album.inputs))
        images = self.image_entries(self.folder_images(self.tree.folder(folder_path)), album.inputs)
        if not any(i["Type"] == "Primary" for i in images):
            for t in sorted(tracks, key=lambda t: (t.fields.get("parent_index_number") or 0,
                                                   t.fields.get("index_number") or 0, t.fields["path"])):
                embedded = [i for i in json.loads(t.fields["images_json"]) if i["Type"] == "Primary"]
                if embedded:
                    images.append(embedded[0])
                    break
        self.finish(album, images)

    # -- everything else -------------------------------------------------------------------

    def generic_in(self, path: str, parent_id: str) -> bool:
        folder = self.tree.folder(path)
        if folder is None:
            return False
        produced = False
        kind = self.collection_type
        for name, st in folder.files.items():
            p = os.path.join(path, name)
            fk = file_kind(name, kind)
            ext = os.path.splitext(name)[1].lower()
            if fk == FileKind.VIDEO and ext in VIDEO_EXTENSIONS:
                if classify_extra(p) is not None and kind not in ("homevideos",):
                    continue
                self.plain_file(p, parent_id, "MusicVideo" if kind == "musicvideos" else "Video")
            elif fk == FileKind.AUDIO and ext in AUDIO_EXTENSIONS and kind not in ("photos", "books"):
                self.plain_file(p, parent_id, "Audio")
            elif fk == FileKind.PHOTO and ext in PHOTO_EXTENSIONS and kind in ("photos", "homevideos", None) \
                    and classify_sidecar_image(p) is None:
                self.photo(p, st, parent_id)
            elif fk == FileKind.BOOK and ext in BOOK_EXTENSIONS and kind in ("books", None):
                item = ScannedItem(id=ids.item_id_for_path(p), fields={
                    "type": "Book", "media_type": "Book", "is_folder": False, "parent_id": parent_id, "path": p,
                    "name": os.path.splitext(name)[0], "size": st.size, "file_size": st.size,
                    "file_mtime": st.mtime, "date_modified": _utc(st.mtime), "date_created": _utc(st.ctime),
                    "container": ext.lstrip(".")})
                self.finish(item)
            else:
                continue
            produced = True
        for d in folder.dirs:
            sub = os.path.join(path, d)
            child = self.folder_item(self.tree.folder(sub), parent_id, register=False, item_type=(
                "PhotoAlbum" if kind == "photos" else "Folder"))
            if self.generic_in(sub, child.id):
                self.finish(child, self.image_entries(self.folder_images(self.tree.folder(sub)), child.inputs))
                produced = True
        return produced

    def plain_file(self, path: str, parent_id: str, item_type: str) -> None:
        st = self._stat(path)
        is_audio = item_type == "Audio"
        stem = os.path.splitext(os.path.basename(path))[0]
        item = ScannedItem(id=ids.item_id_for_path(path), fields={}, media=(path, st))
        item.fields.update(self.media_fields(path, st, is_audio, item.id, item.inputs))
        parsed = parse_movie_name(path) if not is_audio and self.collection_type in (None, "tvshows") else None
        item.fields.update({"type": item_type, "media_type": "Audio" if is_audio else "Video", "is_folder": False,
                            "parent_id": parent_id, "name": parsed.title if parsed else stem,
                            "production_year": parsed.year if parsed else None,
                            "video_type": None if is_audio else "VideoFile"})
        nfo = self.nfo(os.path.join(os.path.dirname(path), stem + ".nfo"), item.inputs) if not is_audio else None
        item.people = self.apply_nfo(item.fields, nfo)
        found = self.folder_images(self.tree.folder(os.path.dirname(path)), stem, prefixed_only=True)
        self.finish(item, self.image_entries(found, item.inputs))

    def photo(self, path: str, st: FileStat, parent_id: str) -> None:
        info = self.measure(path) or {}
        item = ScannedItem(id=ids.item_id_for_path(path), fields={
            "type": "Photo", "media_type": "Photo", "is_folder": False, "parent_id": parent_id, "path": path,
            "name": os.path.splitext(os.path.basename(path))[0], "size": st.size, "file_size": st.size,
            "file_mtime": st.mtime, "date_modified": _utc(st.mtime), "date_created": _utc(st.ctime),
            "width": info.get("Width"), "height": info.get("Height"),
            "container": os.path.splitext(path)[1].lstrip(".").lower()})
        images = [{"Type": "Primary", "Path": path, **info}] if info else []
        self.finish(item, images)
