"""Language lookup for file-name tokens: "en", "eng", "English" -> "eng" (ISO 639-2/B)."""

from __future__ import annotations

from functools import lru_cache

from server.library.scan.naming.iso639 import LANGUAGES

# Common names the ISO tables spell differently.
_ALIASES = {"greek": "gre", "farsi": "per", "brazilian": "por", "castilian": "spa", "flemish": "dut"}


@lru_cache(maxsize=1)
def _index() -> dict[str, str]:
    index: dict[str, str] = dict(_ALIASES)
    for two, bibliographic, terminology, name in LANGUAGES:
        index.setdefault(two, bibliographic)
        index.setdefault(bibliographic, bibliographic)
        index.setdefault(terminology, bibliographic)
        for variant in name.lower().replace(";", ",").split(","):
            variant = variant.split("(")[0].strip()
            if variant:
                index.setdefault(variant, bibliographic)
    return index


def language_code(token: str) -> str | None:
    """The ISO 639-2/B code for a two- or three-letter code or an English language name.

    Region tags are dropped ("pt-BR" -> "por"). Unknown tokens give None.
    """
    text = token.strip().lower()
    if not text:
        return None
    found = _index().get(text)
    if found is None and ("-" in text or "_" in text):
        found = _index().get(text.replace("_", "-").split("-", 1)[0])
    return found
