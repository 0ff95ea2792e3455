"""Related items: similar items, instant mixes, movie recommendations, suggestions and theme
media. Candidates come from ``item_values`` and ``item_people`` by index (kind and value,
person), never by loading the library into Python: Similar sums the weights of the ids sharing
each of the seed's values (a few thousand at most); a mix draws random index ranges.

- Similar: items of the seed's kind (movies and trailers for a movie, series for a series,
  albums for an album, artists for an artist) ranked by shared genres (10 each), people (5;
  directors 8), album artists (6), artists (4), studios (3) and tags (2).
- Instant mix: audio tracks sharing a genre or an artist with the seed (a song, album, artist,
  genre or playlist), in random order, the seed song first.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, case, func, literal, or_, select, true, union_all

from server.db.database import load_orm_classes
from server.db.handles import item_people, item_value_counts, item_values, items, user_data
from server.db.handles import playlist_entries as entries
from server.errors import NotFoundError
from server.guid import normalize_guid
from server.library.browse.mix_fill import MixFill, TrackMap
from server.library.catalog.dto import DtoOptions, build_dtos, build_fragments, row_columns, stored_reply
from server.library.catalog.fragments import splice
from server.library.catalog.items import Viewer
from server.library.catalog.query import (
    ByNameIndex,
    ItemQuery,
    ItemRow,
    ParentalRules,
    driver_rows,
    get_row,
    get_rows,
    item_rows,
    narrow_select,
    parental_conditions,
    parental_where,
)
from server.wire import models as w
from server.wire.casing import encode_wire

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database
    from server.library.catalog.items import ItemService


INSTANT_MIX_LIMIT = 200
_WEIGHTS = {"Genre": 10, "AlbumArtist": 6, "Artist": 4, "Studio": 3, "Tag": 2}
_SIMILAR_TYPES = {"Movie": ("Movie", "Trailer"), "Trailer": ("Movie", "Trailer"), "Series": ("Series",),
                  "Episode": ("Series",), "Season": ("Series",), "MusicAlbum": ("MusicAlbum",),
                  "MusicArtist": ("MusicArtist",), "Audio": ("Audio",)}


@dataclass
class Seed:
    """What a similarity or mix starts from: values (clean, by kind), people and the row."""

    row: ItemRow | _Pseudo | None
    values: dict[str, set[str]] = field(default_factory=dict)
    person_ids: set[str] = field(default_factory=set)

    def add(self, kind: str, value: str) -> None:
        if value:
            self.values.setdefault(kind, set()).add(value.strip().lower())


def _values_of(s: Session, item_ids: list[str] | Any, kinds: tuple[str, ...]) -> list[tuple[str, str]]:
    if isinstance(item_ids, list):  # ids: on the DB-API cursor (no statement to build)
        marker = _marker(s)
        found = driver_rows(s, "SELECT DISTINCT kind, clean_value FROM item_values WHERE kind IN ("
                            + ", ".join([marker] * len(kinds)) + ") AND item_id IN ", item_ids, before=kinds)
        if found is not None:
            return [(r[0], r[1]) for r in found]
    q = select(item_values.c.kind, item_values.c.clean_value).where(
        item_values.c.item_id.in_(item_ids), item_values.c.kind.in_(kinds)).distinct()
    return [(r[0], r[1]) for r in s.execute(q).all()]


def _artist_tracks(name: str):
    return select(item_values.c.item_id).where(item_values.c.kind.in_(("Artist", "AlbumArtist")),
                                               item_values.c.clean_value == name.strip().lower())


def seed_of(s: Session, row: ItemRow | _Pseudo, kinds: tuple[str, ...] = ("Genre", "Studio", "Tag", "Artist", "AlbumArtist")) -> Seed:
    seed = Seed(row)
    if row.type == "MusicArtist":
        # the genres of the artist's tracks, on the DB-API cursor (building the select with its
        # subquery cost ~1.5 ms, SQLite ~0.1 for an artist's few dozen tracks)
        found = driver_rows(s, "SELECT DISTINCT kind, clean_value FROM item_values WHERE kind = 'Genre' AND item_id IN "
                            "(SELECT item_id FROM item_values WHERE kind IN ('Artist', 'AlbumArtist') AND clean_value IN ",
                            [row.name.strip().lower()], ")")
        pairs = [(r[0], r[1]) for r in found] if found is not None \
            else _values_of(s, _artist_tracks(row.name), ("Genre",))
        for kind, value in pairs:
            seed.add(kind, value)
        seed.add("Artist", row.name)
        return seed
    if row.type in ("Season", "Episode") and row.series_id:
        source = [row.series_id]
    elif row.type == "Playlist":
        source = select(entries.c.item_id).where(entries.c.playlist_id == row.id)
    else:
        source = [row.id]
    for kind, value in _values_of(s, source, kinds):
        seed.add(kind, value)
    people = driver_rows(s, "SELECT person_id FROM item_people WHERE item_id IN ", source) \
        if isinstance(source, list) else None
    if people is None:
        people = s.execute(select(item_people.c.person_id).where(item_people.c.item_id.in_(source))).all()
    seed.person_ids = {r[0] for r in people}
    return seed


def _value_score(seed: Seed):
    """(item_id, score) rows for items sharing the seed's values and people."""
    parts = []
    v = item_values
    for kind, weight in _WEIGHTS.items():
        wanted = sorted(seed.values.get(kind, ()))
        if wanted:
            parts.append(select(v.c.item_id.label("item_id"), literal(weight).label("score"))
                         .where(v.c.kind == kind, v.c.clean_value.in_(wanted)))
    if seed.person_ids:
        p = item_people
        weight = case((p.c.kind == "Director", 8), else_=5)
        parts.append(select(p.c.item_id.label("item_id"), weight.label("score"))
                     .where(p.c.person_id.in_(sorted(seed.person_ids))))
    if not parts:
        return None
    u = union_all(*parts).subquery("matches")
    return select(u.c.item_id, func.sum(u.c.score).label("score")).group_by(u.c.item_id).subquery("scores")


def _rows_in_order(s: Session, ordered_ids: list[str]) -> list[ItemRow]:
    found = get_rows(s, ordered_ids)
    return [found[i] for i in ordered_ids if i in found]


def similar_rows(s: Session, seed: Seed, types: tuple[str, ...], limit: int | None, exclude: list[str],
                 allowed: frozenset[str] | None, exclude_artists: list[str],
                 names: ByNameIndex | None = None, parental: ParentalRules | None = None) -> list[ItemRow]:
    """Best-scored items of ``types``; ties in random order (as Jellyfin). The scores are
    summed from the ids sharing each value (covering index ix_item_values_listing) and person
    (item_people), read on the DB-API cursor; the best few hundred are then checked against
    ``items`` (type, extras, libraries, parental rules), and the next few hundred when too few
    of them qualify: a large library costs a few index range reads, no grouping or sort in SQL."""
    row = seed.row
    assert row is not None, "a similarity seed has a row (only mixes start from a genre name)"
    if row.type == "MusicArtist":
        return _similar_artists(s, seed, limit, exclude, allowed, parental)
    wanted = limit if limit is not None else 500
    batch = wanted * 10 + 200
    big = _big_pair(s, seed)
    sharing: set[str] = set()
    scores = _scores(s, seed, big, sharing)
    if scores is None:  # a driver without positional parameters: score in SQL
        return _similar_rows_sql(s, seed, types, limit, exclude, allowed, exclude_artists, names, parental)
    scores.pop(row.id, None)
    draw = _BigTier(s, big, scores, sharing, row.id) if big is not None else None
    if not scores and (draw is None or not draw.left):
        return []
    by_score: dict[int, list[str]] = {}
    for item_id, score in scores.items():
        by_score.setdefault(score, []).append(item_id)
    if draw is not None and draw.left:
        by_score.setdefault(draw.weight, [])
    excluded_artists = [n.lower() for n in (names or ByNameIndex()).names(s, exclude_artists, ("MusicArtist",))] \
        if exclude_artists else []
    found: list[str] = []
    levels = sorted(by_score, reverse=True)
    for _round in range(3):
        candidates: list[str] = []
        while levels and len(candidates) < batch:  # ties in random order, best first
            tier = by_score[levels[0]]
            room = batch - len(candidates)
            if draw is not None and levels[0] == draw.weight and draw.left:
                # the big value's tier: the items sharing only it are drawn, not read (their
                # share of the picks as of the whole tier's, in random order with the others)
                picks = _random.sample(range(len(tier) + draw.left), min(room, len(tier) + draw.left))
                take = [tier[i] for i in picks if i < len(tier)]
                drawn = draw.take(len(picks) - len(take))
                merged = take + drawn
                _random.shuffle(merged)
                candidates.extend(merged)
                if take:
                    taken = set(take)
                    tier = by_score[levels[0]] = [i for i in tier if i not in taken]
                if not tier and not draw.left:
                    levels.pop(0)
                continue
            take = _random.sample(tier, min(len(tier), room))
            candidates.extend(take)
            if len(take) == len(tier):
                levels.pop(0)
            else:
                taken = set(take)
                by_score[levels[0]] = [i for i in tier if i not in taken]
        if not candidates:
            break
        if limit is None:
            found.extend(_qualifying(s, candidates, types, exclude, allowed, excluded_artists, parental))
        else:  # the first that qualify are the answer: checked a few more than missing at a time
            start, size = 0, _CHECK_AHEAD * (wanted - len(found)) + 20
            while start < len(candidates) and len(found) < wanted:
                found.extend(_qualifying(s, candidates[start:start + size], types, exclude, allowed,
                                         excluded_artists, parental))
                start += size
                size *= 4
        if len(found) >= wanted:
            break
    return _rows_in_order(s, found[:wanted] if limit is not None else found)


#: Similar with a limit checks its candidates (``_qualifying``: a probe of ``items`` each) this
#: many times the number still missing at a time (and 20 more, four times as many each next time):
#: most qualify, so a Similar of 12 probes ~56 rows, not all ~320 candidates of its batch
_CHECK_AHEAD = 3

#: a value shared by more items than this is drawn from by random ranges, not read whole, when
#: it is the seed's only such value: an album's genre is ~3.8k tracks and albums at 100k items,
#: of which a Similar of 12 checks ~320 (a draw of most of what is left reads it whole)
_SIMILAR_BIG = 1500


def _big_pair(s: Session, seed: Seed) -> tuple[str, str, int, int] | None:
    """(kind, value, weight, items) of the seed's one value shared by many items (the kept
    counts), or None: no such value, or more than one (their sums are read whole, as before)."""
    pairs = [(kind, value) for kind in _WEIGHTS for value in sorted(seed.values.get(kind, ()))]
    if not pairs or _marker(s) != "?":  # (SQLite: PostgreSQL keeps reading the ids whole)
        return None
    counts = _pair_counts(s, pairs)
    big = [(pair, counts[pair][0]) for pair in pairs if pair in counts and counts[pair][0] > _SIMILAR_BIG]
    if len(big) != 1:
        return None
    (kind, value), total = big[0]
    return kind, value, _WEIGHTS[kind], total


class _BigTier:
    """The items sharing only the big value with the seed (score ``weight``), drawn a few at a
    time as ranges of the covering index from random ids (item ids are hashes: a range is a
    random sample), without the ids scored otherwise, the seed and those drawn before; read whole
    once most of what is left is wanted."""

    def __init__(self, s: Session, big: tuple[str, str, int, int], scores: dict[str, int], sharing: set[str],
                 seed_id: str) -> None:
        self.s = s
        self.kind, self.value, self.weight, total = big
        self.skip = {*scores, seed_id}
        # (an estimate: the kept count leaves out extras; the scored ids sharing it are scored)
        self.left = max(0, total - len(sharing | {seed_id}))
        self.whole = False

    def take(self, n: int) -> list[str]:
        if n <= 0 or not self.left:
            return []
        cursor = self.s.connection().connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        out: list[str] = []
        try:
            if n * 2 >= self.left:
                cursor.execute("SELECT item_id FROM item_values WHERE kind = ? AND clean_value = ?",
                               (self.kind, self.value))
                rest = [r[0] for r in cursor.fetchall() if r[0] not in self.skip]
                out = _random.sample(rest, min(n, len(rest)))
                self.left = len(rest) - len(out) if len(rest) > n else 0
            else:
                for _attempt in range(4):
                    for _r in range(math.ceil((n - len(out)) / _CHUNK)):
                        start = f"{_random.getrandbits(128):032x}"
                        cursor.execute("SELECT item_id FROM item_values WHERE kind = ? AND clean_value = ? AND "
                                       "item_id >= ? ORDER BY item_id LIMIT ?", (self.kind, self.value, start, _CHUNK))
                        got = [r[0] for r in cursor.fetchall()]
                        if len(got) < _CHUNK:  # wrapped past the last id
                            cursor.execute("SELECT item_id FROM item_values WHERE kind = ? AND clean_value = ? "
                                           "AND item_id < ? ORDER BY item_id LIMIT ?",
                                           (self.kind, self.value, start, _CHUNK - len(got)))
                            got.extend(r[0] for r in cursor.fetchall())
                        for i in got:
                            if i not in self.skip and len(out) < n:
                                self.skip.add(i)
                                out.append(i)
                    if len(out) >= n:
                        break
                self.left = max(0, self.left - len(out)) if len(out) >= n else 0
        finally:
            cursor.close()
        self.skip.update(out)
        return out


def _scores(s: Session, seed: Seed, big: tuple[str, str, int, int] | None = None,
            sharing: set[str] | None = None) -> dict[str, int] | None:
    """item id -> summed weight of the values and people it shares with the seed. With ``big``
    (``_big_pair``), the ids of that value are not read: the ids scored by the others get its
    weight when they share it too (one statement over them; they go into ``sharing``), the rest
    are ``_BigTier``'s."""
    scores: dict[str, int] = {}
    for kind, weight in _WEIGHTS.items():
        wanted = sorted(seed.values.get(kind, ()))
        if big is not None and kind == big[0]:
            wanted = [v for v in wanted if v != big[1]]
        if not wanted:
            continue
        found = driver_rows(s, f"SELECT item_id FROM item_values WHERE kind = {_marker(s)} AND clean_value IN ",
                            wanted, before=(kind,))
        if found is None:
            return None
        for (item_id,) in found:
            scores[item_id] = scores.get(item_id, 0) + weight
    if seed.person_ids:
        found = driver_rows(s, "SELECT item_id, kind FROM item_people WHERE person_id IN ", sorted(seed.person_ids))
        if found is None:
            return None
        for item_id, kind in found:
            scores[item_id] = scores.get(item_id, 0) + (8 if kind == "Director" else 5)
    if big is not None and scores:
        kind, value, weight, _total = big
        scored = list(scores)
        for start in range(0, len(scored), 500):
            found_sharing = driver_rows(s, "SELECT item_id FROM item_values WHERE kind = ? AND clean_value = ? "
                                        "AND item_id IN ", scored[start:start + 500], before=(kind, value))
            for (item_id,) in found_sharing or ():
                scores[item_id] += weight
                if sharing is not None:
                    sharing.add(item_id)
    return scores


def _qualifying(s: Session, candidates: list[str], types: tuple[str, ...], exclude: list[str],
                allowed: frozenset[str] | None, excluded_artists: list[str],
                parental: ParentalRules | None) -> list[str]:
    """The candidates of ``types`` (not extras, not excluded) the viewer may see, in the given
    order. Type, owner and library are spelled so that no index serves them (see _playable)."""
    if not exclude and not excluded_artists and parental is None:  # the usual case: on the cursor
        marker = _marker(s)
        libs = sorted(allowed) if allowed is not None else []
        head = ("SELECT id FROM items WHERE coalesce(type, '') IN (" + ", ".join([marker] * len(types))
                + ") AND coalesce(owner_id, '') = '' AND ")
        if allowed is not None:
            head += "coalesce(library_id, '') IN (" + ", ".join([marker] * len(libs)) + ") AND "
        found = driver_rows(s, head + "id IN ", candidates, before=(*types, *libs))
        if found is not None:
            ok = {r[0] for r in found}
            return [i for i in candidates if i in ok]
    c = items.c
    q = select(c.id).where(c.id.in_(candidates), func.coalesce(c.type, "").in_(types),
                           func.coalesce(c.owner_id, "") == "")
    if exclude:
        q = q.where(c.id.not_in(exclude))
    if allowed is not None:
        q = q.where(func.coalesce(c.library_id, "").in_(sorted(allowed)))
    if excluded_artists:
        q = q.where(c.id.not_in(select(item_values.c.item_id).where(
            item_values.c.kind.in_(("Artist", "AlbumArtist")), item_values.c.clean_value.in_(excluded_artists))))
    if parental is not None:
        q = q.where(*parental_conditions(s, parental))
    ok = {r[0] for r in s.execute(q).all()}
    return [i for i in candidates if i in ok]


def _similar_rows_sql(s: Session, seed: Seed, types: tuple[str, ...], limit: int | None, exclude: list[str],
                      allowed: frozenset[str] | None, exclude_artists: list[str],
                      names: ByNameIndex | None, parental: ParentalRules | None) -> list[ItemRow]:
    """similar_rows scored in one grouped SQL query (drivers with named parameters)."""
    row = seed.row
    assert row is not None
    c = items.c
    scores = _value_score(seed)
    if scores is None:
        return []
    wanted = limit if limit is not None else 500
    best = (select(scores.c.item_id, scores.c.score).where(scores.c.item_id != row.id)
            .order_by(scores.c.score.desc(), func.random()).limit(wanted * 10 + 200).subquery("best"))
    q = (select(c.id).select_from(best.join(items, c.id == best.c.item_id))
         .where(c.type.in_(types), c.owner_id.is_(None))
         .order_by(best.c.score.desc()))
    if exclude:
        q = q.where(c.id.not_in(exclude))
    if allowed is not None:
        q = q.where(c.library_id.in_(sorted(allowed)))
    if parental is not None:
        q = q.where(*parental_conditions(s, parental))
    if exclude_artists:
        excluded = [n.lower() for n in (names or ByNameIndex()).names(s, exclude_artists, ("MusicArtist",))]
        if excluded:
            q = q.where(c.id.not_in(select(item_values.c.item_id).where(
                item_values.c.kind.in_(("Artist", "AlbumArtist")), item_values.c.clean_value.in_(excluded))))
    if limit is not None:
        q = q.limit(limit)
    return _rows_in_order(s, [r[0] for r in s.execute(q).all()])


def _similar_artists(s: Session, seed: Seed, limit: int | None, exclude: list[str],
                     allowed: frozenset[str] | None, parental: ParentalRules | None = None) -> list[ItemRow]:
    genres = sorted(seed.values.get("Genre", ()))
    row = seed.row
    if not genres or row is None:
        return []
    a, g = item_values.alias("a"), item_values.alias("g")
    shared = (select(a.c.clean_value.label("artist"), func.count(func.distinct(g.c.clean_value)).label("score"))
              .select_from(a.join(g, and_(g.c.item_id == a.c.item_id, g.c.kind == "Genre")))
              .where(a.c.kind.in_(("Artist", "AlbumArtist")), g.c.clean_value.in_(genres),
                     a.c.clean_value != row.name.strip().lower())
              .group_by(a.c.clean_value).subquery("shared"))
    c = items.c
    q = (select(items).select_from(items.join(shared, shared.c.artist == func.lower(c.name)))
         .where(c.type == "MusicArtist", c.id != row.id, c.id.not_in(exclude))
         .order_by(shared.c.score.desc(), c.sort_name, c.id))
    if allowed is not None:
        q = q.where(c.library_id.in_(sorted(allowed)))
    if parental is not None:
        q = q.where(*parental_conditions(s, parental))
    if limit is not None:
        q = q.limit(limit)
    return item_rows(s.execute(q).all())


def mix_rows(s: Session, seed: Seed, limit: int, allowed: frozenset[str] | None,
             parental: ParentalRules | None = None) -> list[ItemRow]:
    """The rows of ``mix_ids``, in its order (the reference the reply path is compared with)."""
    rows: dict[str, ItemRow] = {}
    ids = mix_ids(s, seed, limit, allowed, parental, rows)
    return [rows[i] for i in ids if i in rows]


def mix_ids(s: Session, seed: Seed, limit: int, allowed: frozenset[str] | None,
            parental: ParentalRules | None = None, rows: dict[str, ItemRow] | None = None,
            columns: tuple[str, ...] | None = None, tracks: TrackMap | None = None) -> list[str]:
    """Ids of audio sharing a genre or an artist with the seed, in random order, the seed song first.
    Candidates are drawn from ``item_values`` by ``_draw`` (a bounded number of index range reads,
    whatever the size of the genres, shuffled); the first of them are checked with the playable
    test in one statement (audio, not an extra, the viewer's libraries and parental rules:
    ``_playable_ids``), a few more than ``limit`` at a time. With ``rows`` that statement reads
    the playable candidates' whole rows into it (the mix's rows then need no second read of the
    same rows by id: ~2 ms of 200 wide rows at 100k items), else only their ids (the picked ids'
    stored fragments, or rows, are read after). ``columns`` (``dto.row_columns``): only those of
    the rows are read, the others are None (rows for a reply that stores no fragment of them).
    ``tracks`` (the mix fill's ``TrackMap``, with no ``rows`` and no parental rules): the playable
    test in memory, the same answer (``test_mix_fill.py``)."""
    genres = sorted(seed.values.get("Genre", ()))
    artists = sorted(seed.values.get("Artist", set()) | seed.values.get("AlbumArtist", set()))
    pairs = [("Genre", g) for g in genres] + [(k, a) for a in artists for k in ("Artist", "AlbumArtist")]
    if not pairs:
        return []
    first = seed.row.id if isinstance(seed.row, ItemRow) and seed.row.type == "Audio" else None
    wanted = limit if first is None else limit + 1  # the seed may be drawn too: it is not counted twice
    found: dict[str, None] = {}
    checked: set[str] = set()
    share = 1.0  # of the candidates checked so far, the share that played
    for candidates in _draw(s, pairs, limit):  # each round shuffled
        fresh = [i for i in candidates if i not in checked]
        start = 0
        while start < len(fresh) and len(found) < wanted:
            # most candidates play (the rest: albums sharing the value, tracks the viewer's rules
            # hide): as many as are missing over the share that played so far, and a tenth more
            # (a partly hidden library: one or two statements, not four or five)
            size = max(20, math.ceil((wanted - len(found)) / share * 1.1) + 5)
            chunk = fresh[start:start + size]
            start += size
            checked.update(chunk)
            playable = tracks.playable(chunk, allowed) if tracks is not None else None
            if playable is None:
                playable = _playable_ids(s, chunk, allowed, parental, rows, columns)
            found.update((i, None) for i in chunk if i in playable)
            share = max(0.05, len(found) / len(checked))
        if len(found) >= wanted:
            break
    picked = list(found)
    _random.shuffle(picked)
    if first is not None:
        picked = [first, *(i for i in picked if i != first)]
    picked = picked[:limit]
    if rows is not None:
        missing = [i for i in picked if i not in rows]  # (the seed song when it was not drawn)
        if missing:
            rows.update(get_rows(s, missing))
    return picked


_random = random.Random()
#: rows read per range of a draw: each range starts at a random id, so a draw of a few hundred
#: candidates comes from many places of a genre, not one run of neighbouring ids
_CHUNK = 40


def _draw(s: Session, pairs: list[tuple[str, str]], limit: int) -> Iterator[list[str]]:
    """Random candidate item ids of the ``(kind, clean_value)`` pairs, in rounds of growing size
    (the caller stops when it has enough). Item ids are hashes, so a range of the covering index
    ``ix_item_values_listing`` (kind, clean_value, item_id) from a random id is a random sample of
    a value's items: each pair gets its share of the draw (by how many audio items it has, from
    the kept counts) as a few ranges from random starts, wrapping at the end. A pair whose share
    is most of it is read whole. Replaces ``ORDER BY random()`` over every candidate (an artist's
    17 genres: 50k index rows sorted per request at 100k items)."""
    counts = _pair_counts(s, pairs)
    audio = sum(a for _, a in counts.values())
    if audio == 0:  # counts missing (or no audio at all): read every candidate once
        yield _all_candidates(s, pairs)
        return
    conn = s.connection()
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    after = (f"SELECT item_id FROM item_values WHERE kind = {marker} AND clean_value = {marker} "
             f"AND item_id >= {marker} ORDER BY item_id LIMIT {marker}")
    before = (f"SELECT item_id FROM item_values WHERE kind = {marker} AND clean_value = {marker} "
              f"AND item_id < {marker} ORDER BY item_id LIMIT {marker}")
    factor = 1.5
    for _ in range(3):
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        out: list[str] = []
        whole = True
        try:
            for pair in pairs:
                total, in_audio = counts.get(pair, (0, 0))
                if in_audio == 0:
                    continue
                want = math.ceil(factor * limit * total / audio) + 2
                if want * 2 >= total:  # most of it: the whole range, in index order
                    cursor.execute(after, (*pair, "", total + 1000))
                    out.extend(r[0] for r in cursor.fetchall())
                    continue
                whole = False
                ranges = math.ceil(want / _CHUNK)
                size = math.ceil(want / ranges)
                for _r in range(ranges):
                    start = f"{_random.getrandbits(128):032x}"
                    cursor.execute(after, (*pair, start, size))
                    got = [r[0] for r in cursor.fetchall()]
                    if len(got) < size:  # wrapped past the last id
                        cursor.execute(before, (*pair, start, size - len(got)))
                        got.extend(r[0] for r in cursor.fetchall())
                    out.extend(got)
        finally:
            cursor.close()
        _random.shuffle(out)
        yield list(dict.fromkeys(out))
        if whole:
            return
        factor *= 4


def _pair_counts(s: Session, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int]]:
    """(rows in item_values, audio items) per pair, from the kept counts (facets.py)."""
    k = item_value_counts.c
    kinds = sorted({kind for kind, _ in pairs})
    values = sorted({value for _, value in pairs})
    wanted = set(pairs)
    marker = _marker(s)  # on the DB-API cursor: building the select below cost ~1 ms, SQLite ~0.1
    found = driver_rows(s, "SELECT kind, clean_value, sum(item_count), sum(CASE WHEN item_type = 'Audio' "
                        "THEN item_count ELSE 0 END) FROM item_value_counts WHERE kind IN ("
                        + ", ".join([marker] * len(kinds)) + ") AND clean_value IN ", values,
                        " GROUP BY kind, clean_value", before=kinds)
    if found is not None:  # None: a driver with named parameters
        return {(r[0], r[1]): (int(r[2] or 0), int(r[3] or 0)) for r in found if (r[0], r[1]) in wanted}
    q = (select(k.kind, k.clean_value, func.sum(k.item_count),
                func.sum(case((k.item_type == "Audio", k.item_count), else_=0)))
         .where(k.kind.in_(kinds), k.clean_value.in_(values)).group_by(k.kind, k.clean_value))
    return {(r[0], r[1]): (int(r[2] or 0), int(r[3] or 0)) for r in s.execute(q).all() if (r[0], r[1]) in wanted}


def _all_candidates(s: Session, pairs: list[tuple[str, str]]) -> list[str]:
    v = item_values
    conds = [and_(v.c.kind == kind, v.c.clean_value == value) for kind, value in pairs]
    out = [r[0] for r in s.execute(select(v.c.item_id).where(or_(*conds))).all()]
    _random.shuffle(out)
    return list(dict.fromkeys(out))


_PLAYABLE = "coalesce(type, '') = 'Audio' AND coalesce(owner_id, '') = '' AND "
_SELECT_PLAYABLE = "SELECT id FROM items WHERE " + _PLAYABLE


def _playable_ids(s: Session, candidates: list[str], allowed: frozenset[str] | None,
                  parental: ParentalRules | None, rows: dict[str, ItemRow] | None = None,
                  columns: tuple[str, ...] | None = None) -> set[str]:
    """The candidates that are audio tracks (not extras) the viewer may see; with ``rows``, their
    rows are read (into it) by the same statement (only ``columns`` of them, the others None:
    ``query.narrow_select``), else their ids only (the rows of the picked ones are read after, or
    not at all when the store has them).
    Type, owner and library are spelled so that no index serves them (coalesce): SQLite would
    otherwise walk the type index over every track instead of looking the ids up (70 ms vs
    0.4 ms for 400 ids at 100k items)."""
    if not candidates:
        return set()
    out: set[str] = set()
    c = items.c
    libs = sorted(allowed) if allowed is not None else []
    from_db = ItemRow.from_db
    # the viewer's rules as driver SQL (made once per rules and rating list): no select to build
    where = parental_where(s, parental) if parental is not None and parental.active else ("", ())
    for start in range(0, len(candidates), 500):
        chunk = candidates[start:start + 500]
        if where is not None:
            head = _SELECT_PLAYABLE if rows is None else narrow_select(columns) + " WHERE " + _PLAYABLE
            if allowed is not None:
                head += "coalesce(library_id, '') IN (" + ", ".join([_marker(s)] * len(libs)) + ") AND "
            if where[0]:
                head += "(" + where[0] + ") AND "
            found = driver_rows(s, head + "id IN ", chunk, before=(*libs, *where[1]))
            if found is not None:
                if rows is None:
                    out.update(r[0] for r in found)
                else:
                    for values in found:
                        row = from_db(values)
                        rows[row.id] = row
                        out.add(row.id)
                continue
        q = select(c.id if rows is None else items).where(
            c.id.in_(chunk), func.coalesce(c.type, "") == "Audio", func.coalesce(c.owner_id, "") == "")
        if allowed is not None:
            q = q.where(func.coalesce(c.library_id, "").in_(libs))
        if parental is not None and parental.active:
            q = q.where(*parental_conditions(s, parental))
        if rows is None:
            out.update(r[0] for r in s.execute(q).all())
        else:
            for row in item_rows(s.execute(q).all()):
                rows[row.id] = row
                out.add(row.id)
    return out


def _marker(s: Session) -> str:
    return "?" if s.connection().dialect.paramstyle == "qmark" else "%s"


_Pick = tuple[Seed, int, "frozenset[str] | None", "ParentalRules | None"]


class _SeedElsewhere(Exception):
    """The mix's seed is not an item row the mix's read can check by itself."""


class _MixStore:
    """Whether a mix asks the fragment store (and stores the fragments it builds). Asking costs a
    read of the store (~0.5 ms for 200 ids), storing the digests and the store's writer thread
    ~7 us of CPU per fragment (~1.4 ms a mix of 200); both pay only when later mixes pick the same
    tracks again (a small library, a genre played again and again). So the share of a mix's
    tracks found stored is followed (a moving average over the mixes that asked); while it stays
    under ``low`` only one mix in ``sample`` asks (enough to see the share grow when mixes start
    to repeat), the others read their rows and build as the DTO path does. Approximate under
    concurrent reads, by design (plain attributes, no lock)."""

    __slots__ = ("count", "share")

    low = 0.2
    sample = 8

    def __init__(self) -> None:
        self.share = 1.0  # (a new server asks: mixes of a small library repeat at once)
        self.count = 0

    def ask(self) -> bool:
        self.count += 1
        return self.share >= self.low or self.count % self.sample == 0

    def seen(self, stored: int, total: int) -> None:
        if total:
            self.share = 0.8 * self.share + 0.2 * (stored / total)


class RelatedService:
    def __init__(self, db: Database, items: ItemService) -> None:
        self.db = db
        self.items = items
        self._mix_store = _MixStore()
        #: the store filled ahead of time for the shapes mixes are asked with (mix_fill.py)
        self.mix_fill = MixFill(db, items)

    def close(self) -> None:
        """Stop the mix fill (before the fragment store closes)."""
        self.mix_fill.close()

    def _result(self, s: Session, rows: list[ItemRow], opts: DtoOptions) -> w.BaseItemDtoQueryResult:
        """The rows' DTOs, built in the read that found them (one thread hop, one session)."""
        dtos = build_dtos(s, rows, opts, self.items.server_id)
        return w.BaseItemDtoQueryResult(Items=dtos, TotalRecordCount=len(dtos), StartIndex=0)

    async def similar(self, item_id: str, viewer: Viewer, opts: DtoOptions, *, limit: int | None,
                      exclude_artist_ids: list[str], kinds: tuple[str, ...] | None = None) -> w.BaseItemDtoQueryResult:
        row = await self._row_or_artist(item_id, viewer)
        types = kinds or _SIMILAR_TYPES.get(row.type, (row.type,))
        allowed = viewer.allowed_library_ids

        def read(s: Session) -> w.BaseItemDtoQueryResult:
            return self._result(s, similar_rows(s, seed_of(s, row), types, limit, [], allowed, exclude_artist_ids,
                                                self.items.by_name, viewer.parental), opts)

        return await self.db.read(read)

    async def _row_or_artist(self, item_id: str, viewer: Viewer) -> ItemRow:
        """An item row; a by-name artist id resolves to its MusicArtist row."""
        return await self.items.row(item_id, viewer)

    # -- instant mix ------------------------------------------------------------------------

    async def instant_mix(self, viewer: Viewer, opts: DtoOptions, limit: int | None, *, item_id: str | None = None,
                          genre_id: str | None = None, genre_name: str | None = None) -> w.BaseItemDtoQueryResult:
        """The mix as DTOs (the reference ``instant_mix_reply`` is compared with)."""
        pick = await self._mix_picker(viewer, limit, item_id, genre_id, genre_name)
        return await self.db.read(lambda s: self._result(s, mix_rows(s, *pick(s)), opts))

    async def instant_mix_reply(self, viewer: Viewer, opts: DtoOptions, limit: int | None, camel: bool, *,
                                item_id: str | None = None, genre_id: str | None = None,
                                genre_name: str | None = None) -> bytes:
        """``instant_mix``'s reply already encoded (``camel``: camelCase names). With the fragment
        store, the picked ids' stored fragments of the current epoch are used as they are and only
        the other ids' rows are read and built (``StoreUse.fetch``, as a GetItems page does) and
        stored by the store's writer thread; while mixes rarely find their tracks stored, most
        mixes do not ask the store (``_MixStore``), unless the mix fill (mix_fill.py) covered the
        mix's shape in the current epoch: then every mix asks, reading its candidates' ids only.
        Without the store the fragments are built (the same bytes)."""
        key = normalize_guid(item_id) if item_id is not None else None
        if key is not None:  # the seed found in the mix's own read (one thread hop and session, not two)
            seed_pick = self._mix_pick(None, INSTANT_MIX_LIMIT if limit is None else min(limit, 10_000), viewer)
            try:
                return await self._instant_mix_read(viewer, opts, camel, self._seed_in_read(key, viewer, seed_pick))
            except _SeedElsewhere:
                pass  # a playlist, a by-name id, or none the viewer may see: as routed before
        pick = await self._mix_picker(viewer, limit, item_id, genre_id, genre_name)
        return await self._instant_mix_read(viewer, opts, camel, pick)

    def _seed_in_read(self, key: str, viewer: Viewer, seed_pick: Callable[[Session, ItemRow], _Pick]
                      ) -> Callable[[Session], _Pick]:
        """``pick`` for a seed that is an item row the viewer may see (not a playlist, whose
        privacy ``ItemService.row`` checks in a read of its own), read in the mix's read; anything
        else raises ``_SeedElsewhere`` (nothing read yet but the row)."""
        def pick(s: Session) -> _Pick:
            row = get_row(s, key)
            if row is None or row.type == "Playlist" or not self.items._may_see(s, row, viewer):
                raise _SeedElsewhere
            return seed_pick(s, row)

        return pick

    async def _instant_mix_read(self, viewer: Viewer, opts: DtoOptions, camel: bool,
                                pick: Callable[[Session], _Pick]) -> bytes:
        generation = self.db.content_generation
        use = self.items.store_use(opts, camel)  # before the read
        # (the store filled for this shape and epoch: every pick asks it; see mix_fill.py)
        filled = use is not None and self.mix_fill.filled(use)
        # (and, for a viewer without parental rules, the playable test in memory)
        rules = viewer.parental
        tracks = self.mix_fill.tracks(generation) if filled and not (rules is not None and rules.active) else None
        if use is not None:
            self.mix_fill.want(use, opts, camel)

        def read(s: Session) -> bytes:
            mix = self._mix_store
            ask = use is not None and (filled or mix.ask())
            # the playable test reads the candidates' rows too, unless most picks are likely stored
            rows: dict[str, ItemRow] | None = None if ask and (filled or mix.share >= 0.5) else {}
            # (a mix that does not ask stores nothing: its rows need only the columns the build
            # reads, ~25 of the 57 not read; one that asks digests whole rows)
            ids = mix_ids(s, *pick(s), rows, None if ask else row_columns(opts), tracks if rows is None else None)
            # (a mix that did not ask stores nothing either: storing every built track cost the
            # store's writer ~5 ms of CPU a mix of random tracks, more than a later hit saves)
            entries: dict[str, Any] = use.fetch(s, ids, rows) if ask else rows  # type: ignore[union-attr,assignment]
            ordered = [entries[i] for i in ids if i in entries]
            if ask:
                stored = len(ordered) - sum(1 for e in ordered if e.__class__ is ItemRow)
                mix.seen(stored, len(ordered))
                if filled:
                    self.mix_fill.seen(use, stored, len(ordered))  # type: ignore[arg-type]
            shell = encode_wire(w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=len(ordered), StartIndex=0),
                                camel)
            if ask and stored == len(ordered):  # every track stored (a filled mix): the reply in one join
                return stored_reply(s, ordered, opts, camel, shell)
            # (no in-memory fragment cache: a mix's random picks would push the pages' fragments out)
            return splice(shell, build_fragments(s, ordered, opts, self.items.server_id, None, camel,
                                                 store=use if ask else None))

        return await self.db.read(read)

    async def _mix_picker(self, viewer: Viewer, limit: int | None, item_id: str | None, genre_id: str | None,
                          genre_name: str | None
                          ) -> Callable[[Session], _Pick]:
        """The seed (checked: 404s before the read) and what a read passes to ``mix_ids``."""
        count = INSTANT_MIX_LIMIT if limit is None else min(limit, 10_000)
        row: ItemRow | _Pseudo | None = None
        if item_id is not None:
            row = await self._mix_seed_row(item_id, viewer)
        elif genre_id is not None:
            found = await self.db.read(lambda s: self.items.by_name.lookup(s, genre_id))
            if found is None or found[0] not in ("Genre", "MusicGenre"):
                raise NotFoundError("Genre not found.")
            genre_name = found[1]

        seed_pick = self._mix_pick(genre_name, count, viewer)
        return lambda s: seed_pick(s, row)

    @staticmethod
    def _mix_pick(genre_name: str | None, count: int, viewer: Viewer) -> Callable[[Session, ItemRow | _Pseudo | None], _Pick]:
        """What a read passes to ``mix_ids`` for a seed row (or, without one, a genre name)."""
        allowed = viewer.allowed_library_ids

        def pick(s: Session, row: ItemRow | _Pseudo | None) -> _Pick:
            if row is not None and row.type == "MusicGenre":
                seed = Seed(None)
                seed.add("Genre", row.name)
            elif row is not None:
                seed = seed_of(s, row, ("Genre", "Artist", "AlbumArtist"))
                if row.type == "MusicArtist":
                    seed.add("Artist", row.name)
            else:
                seed = Seed(None)
                seed.add("Genre", genre_name or "")
            return seed, count, allowed, viewer.parental

        return pick

    async def _mix_seed_row(self, item_id: str, viewer: Viewer) -> ItemRow | _Pseudo:
        key = item_id
        try:
            return await self.items.row(key, viewer)
        except NotFoundError:
            found = await self.db.read(lambda s: self.items.by_name.lookup(s, key))
            if found is None:
                raise
            kind, name = found
            if kind == "MusicArtist":
                return _Pseudo(id=key, type="MusicArtist", name=name)
            if kind in ("Genre", "MusicGenre"):
                return _Pseudo(id=key, type="MusicGenre", name=name)
            raise

    # -- recommendations and suggestions ----------------------------------------------------

    async def movie_recommendations(self, viewer: Viewer, opts: DtoOptions, parent_id: str | None,
                                    category_limit: int, item_limit: int) -> list[w.RecommendationDto]:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Person

        if viewer.user_id is None:
            return []
        user_id, allowed, parental = viewer.user_id, viewer.allowed_library_ids, viewer.parental
        server_id = self.items.server_id

        def read(s: Session) -> list[w.RecommendationDto]:
            c = items.c
            base = (select(items).select_from(items.join(user_data, and_(user_data.c.item_id == c.id,
                                                                          user_data.c.user_id == user_id)))
                    .where(c.type == "Movie", c.owner_id.is_(None)))
            if parent_id:
                base = base.where(c.library_id == parent_id)
            if allowed is not None:
                base = base.where(c.library_id.in_(sorted(allowed)))
            if parental is not None:
                base = base.where(*parental_conditions(s, parental))
            played_ids = select(user_data.c.item_id).where(user_data.c.user_id == user_id, user_data.c.played == true())
            # most recently played first, a movie marked played without a date last (SQLite's
            # order for DESC; PostgreSQL puts NULLs first unless told)
            newest_first = user_data.c.last_played_date.desc()
            if s.get_bind().dialect.name == "postgresql":
                newest_first = newest_first.nulls_last()
            recent = item_rows(s.execute(base.where(user_data.c.played == true())
                                    .order_by(newest_first).limit(category_limit)).all())
            liked = item_rows(s.execute(base.where(or_(user_data.c.is_favorite == true(), user_data.c.likes == true()))
                                   .order_by(func.random()).limit(category_limit)).all())
            out: list[w.RecommendationDto] = []
            excluded = [r[0] for r in s.execute(played_ids).all()]

            def category(seed_row: ItemRow, kind: str, seed: Seed) -> None:
                rows = similar_rows(s, seed, ("Movie",), item_limit, excluded, allowed, [], parental=parental)
                if rows:
                    out.append(w.RecommendationDto(Items=build_dtos(s, rows, opts, server_id), RecommendationType=kind,
                                                   BaselineItemName=seed_row.name, CategoryId=seed_row.id))

            for r in recent:
                category(r, "SimilarToRecentlyPlayed", seed_of(s, r))
            for r in liked:
                category(r, "SimilarToLikedItem", seed_of(s, r))
            for r in recent:
                for kind, label in (("Director", "HasDirectorFromRecentlyPlayed"),
                                    ("Actor", "HasActorFromRecentlyPlayed")):
                    person = s.execute(select(item_people.c.person_id, item_people.c.person_id).where(
                        item_people.c.item_id == r.id, item_people.c.kind == kind)
                        .order_by(item_people.c.sort_order).limit(1)).first()
                    if person is None:
                        continue
                    seed = Seed(r, person_ids={person[0]})
                    rows = similar_rows(s, seed, ("Movie",), item_limit, excluded, allowed, [], parental=parental)
                    name = s.execute(select(items.c.name).where(items.c.id == r.id)).scalar()
                    if rows:
                        pname = s.get(Person, person[0])
                        out.append(w.RecommendationDto(
                            Items=build_dtos(s, rows, opts, server_id), RecommendationType=label,
                            BaselineItemName=pname.name if pname else name, CategoryId=person[0]))
            return out[:category_limit]

        return await self.db.read(read)

    async def suggestions(self, viewer: Viewer, opts: DtoOptions, media_types: list[str], types: list[str],
                          start_index: int, limit: int | None, total: bool) -> w.BaseItemDtoQueryResult:
        q = ItemQuery(recursive=True, media_types=media_types, include_types=types, is_missing=False,
                      sort_by=["Random"], start_index=start_index, limit=limit, enable_total_record_count=total)
        self.items.scoped(q, viewer)
        return await self.items.query(q, opts)

    # -- theme media ------------------------------------------------------------------------

    async def theme(self, item_id: str, viewer: Viewer, opts: DtoOptions, kind: str, inherit: bool,
                    sort_by: list[str], sort_order: list[str]) -> w.ThemeMediaResult:
        row = await self.items.row(item_id, viewer)
        extra = "ThemeSong" if kind == "songs" else "ThemeVideo"
        owner: ItemRow | None = row
        result = None
        while owner is not None:
            q = ItemQuery(owner_id=owner.id, extra_types=[extra], sort_by=sort_by or ["SortName"], sort_order=sort_order)
            self.items.scoped(q, viewer)
            result = await self.items.query(q, opts)
            if result.Items or not inherit or not owner.parent_id:
                break
            parent_id = owner.parent_id
            owner = await self.db.read(lambda s, pid=parent_id: get_row(s, pid))
            if owner is not None and owner.type in ("CollectionFolder", "UserRootFolder"):
                owner = None
        items_ = result.Items if result else []
        return w.ThemeMediaResult(Items=items_, TotalRecordCount=len(items_), StartIndex=0,
                                  OwnerId=(owner.id if owner is not None and items_ else row.id))


@dataclass
class _Pseudo:
    """A by-name seed (an artist or genre with no item row)."""

    id: str
    type: str
    name: str
    series_id: str | None = None

    @property
    def is_folder(self) -> bool:
        return True

