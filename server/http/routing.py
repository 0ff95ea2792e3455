"""Case-insensitive route matching over Jellyfin path templates.

Jellyfin matches paths and query keys case-insensitively and has templates with parameters
inside a segment (``stream.{container}``, ``{segmentId}.{container}``). Litestar matches exact
case and whole segments only, so every template has an *internal* Litestar path in which each
mixed segment becomes a marker segment followed by one segment per parameter::

    /Videos/{itemId}/stream.{container}  ->  /Videos/{itemId}/~stream.*/{container}

``RouteIndex.match`` finds the template of a request path and rewrites it to that internal path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::[a-z]+)?\}")


def is_mixed(segment: str) -> bool:
    params = _PARAM.findall(segment)
    return bool(params) and _PARAM.fullmatch(segment) is None


def internal_path(template: str) -> str:
    """The Litestar path for a Jellyfin template."""
    out: list[str] = []
    for seg in template.split("/"):
        if is_mixed(seg):
            out.append("~" + _PARAM.sub("*", seg))
            out.extend("{" + name + "}" for name in _PARAM.findall(seg))
        else:
            out.append(seg)
    return "/".join(out)


def template_path(internal: str) -> str:
    """The inverse of :func:`internal_path` (for the OpenAPI document)."""
    segs = internal.split("/")
    out: list[str] = []
    i = 0
    while i < len(segs):
        seg = segs[i]
        if seg.startswith("~"):
            pattern = seg[1:]
            n = pattern.count("*")
            names = segs[i + 1 : i + 1 + n]
            for name in names:
                pattern = pattern.replace("*", name, 1)
            out.append(pattern)
            i += 1 + n
        else:
            out.append(seg)
            i += 1
    return "/".join(out)


def _mixed_regex(segment: str) -> re.Pattern[str]:
    parts: list[str] = []
    pos = 0
    names = _PARAM.findall(segment)
    for n, m in enumerate(_PARAM.finditer(segment)):
        parts.append(re.escape(segment[pos : m.start()]))
        last = n == len(names) - 1
        parts.append("([^/.]+)" if last else "([^/]+?)")
        pos = m.end()
    parts.append(re.escape(segment[pos:]))
    return re.compile("^" + "".join(parts) + "$", re.IGNORECASE)


@dataclass
class _Node:
    static: dict[str, tuple[str, _Node]] = field(default_factory=dict)
    param: _Node | None = None
    mixed: list[tuple[re.Pattern[str], str, list[str], _Node]] = field(default_factory=list)
    template: str | None = None


@dataclass(frozen=True, slots=True)
class RouteMatch:
    template: str
    internal: str  # the concrete internal path to hand to Litestar
    path_params: dict[str, str]


class RouteIndex:
    def __init__(self) -> None:
        self._root = _Node()

    def add(self, template: str) -> None:
        node = self._root
        for seg in template.strip("/").split("/"):
            if not seg:
                continue
            if _PARAM.fullmatch(seg):
                if node.param is None:
                    node.param = _Node()
                node = node.param
            elif is_mixed(seg):
                for _rx, raw, _names, child in node.mixed:
                    if raw == seg:
                        node = child
                        break
                else:
                    child = _Node()
                    node.mixed.append((_mixed_regex(seg), seg, _PARAM.findall(seg), child))
                    node = child
            else:
                key = seg.lower()
                if key not in node.static:
                    node.static[key] = (seg, _Node())
                node = node.static[key][1]
        node.template = template

    def match(self, path: str) -> RouteMatch | None:
        segs = [s for s in path.split("/") if s]
        found = self._walk(self._root, segs, 0, [], [])
        if found is None:
            return None
        template, internal_segs, values = found
        names = _PARAM.findall(template)
        return RouteMatch(template, "/" + "/".join(internal_segs), dict(zip(names, values, strict=True)))

    def _walk(self, node: _Node, segs: list[str], i: int, acc: list[str], values: list[str]):
        if i == len(segs):
            if node.template is not None:
                return node.template, acc, values
            return None
        seg = segs[i]
        hit = node.static.get(seg.lower())
        if hit is not None:
            r = self._walk(hit[1], segs, i + 1, [*acc, hit[0]], values)
            if r is not None:
                return r
        for rx, raw, _names, child in node.mixed:
            m = rx.match(seg)
            if m:
                got = list(m.groups())
                marker = "~" + _PARAM.sub("*", raw)
                r = self._walk(child, segs, i + 1, [*acc, marker, *got], [*values, *got])
                if r is not None:
                    return r
        if node.param is not None:
            r = self._walk(node.param, segs, i + 1, [*acc, seg], [*values, seg])
            if r is not None:
                return r
        return None
