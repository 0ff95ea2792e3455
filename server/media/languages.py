"""Stream language codes: normalise to ISO 639-2 three-letter codes and name them in English."""

from __future__ import annotations

# (English name, ISO 639-1, ISO 639-2/B, ISO 639-2/T). Media containers mostly carry the
# bibliographic (B) code ("ger", "fre"); some tools write the terminology (T) code instead.
_LANGUAGES: tuple[tuple[str, str | None, str, str], ...] = (
    ("Afrikaans", "af", "afr", "afr"),
    ("Albanian", "sq", "alb", "sqi"),
    ("Amharic", "am", "amh", "amh"),
    ("Arabic", "ar", "ara", "ara"),
    ("Armenian", "hy", "arm", "hye"),
    ("Basque", "eu", "baq", "eus"),
    ("Belarusian", "be", "bel", "bel"),
    ("Bengali", "bn", "ben", "ben"),
    ("Bosnian", "bs", "bos", "bos"),
    ("Breton", "br", "bre", "bre"),
    ("Bulgarian", "bg", "bul", "bul"),
    ("Burmese", "my", "bur", "mya"),
    ("Cantonese", None, "yue", "yue"),
    ("Catalan", "ca", "cat", "cat"),
    ("Chinese", "zh", "chi", "zho"),
    ("Croatian", "hr", "hrv", "hrv"),
    ("Czech", "cs", "cze", "ces"),
    ("Danish", "da", "dan", "dan"),
    ("Dutch", "nl", "dut", "nld"),
    ("English", "en", "eng", "eng"),
    ("Esperanto", "eo", "epo", "epo"),
    ("Estonian", "et", "est", "est"),
    ("Faroese", "fo", "fao", "fao"),
    ("Filipino", None, "fil", "fil"),
    ("Finnish", "fi", "fin", "fin"),
    ("French", "fr", "fre", "fra"),
    ("Galician", "gl", "glg", "glg"),
    ("Georgian", "ka", "geo", "kat"),
    ("German", "de", "ger", "deu"),
    ("Greek", "el", "gre", "ell"),
    ("Gujarati", "gu", "guj", "guj"),
    ("Hausa", "ha", "hau", "hau"),
    ("Hebrew", "he", "heb", "heb"),
    ("Hindi", "hi", "hin", "hin"),
    ("Hungarian", "hu", "hun", "hun"),
    ("Icelandic", "is", "ice", "isl"),
    ("Indonesian", "id", "ind", "ind"),
    ("Irish", "ga", "gle", "gle"),
    ("Italian", "it", "ita", "ita"),
    ("Japanese", "ja", "jpn", "jpn"),
    ("Kannada", "kn", "kan", "kan"),
    ("Kazakh", "kk", "kaz", "kaz"),
    ("Khmer", "km", "khm", "khm"),
    ("Korean", "ko", "kor", "kor"),
    ("Lao", "lo", "lao", "lao"),
    ("Latin", "la", "lat", "lat"),
    ("Latvian", "lv", "lav", "lav"),
    ("Lithuanian", "lt", "lit", "lit"),
    ("Luxembourgish", "lb", "ltz", "ltz"),
    ("Macedonian", "mk", "mac", "mkd"),
    ("Malay", "ms", "may", "msa"),
    ("Malayalam", "ml", "mal", "mal"),
    ("Maltese", "mt", "mlt", "mlt"),
    ("Marathi", "mr", "mar", "mar"),
    ("Mongolian", "mn", "mon", "mon"),
    ("Nepali", "ne", "nep", "nep"),
    ("Norwegian", "no", "nor", "nor"),
    ("Norwegian Bokmål", "nb", "nob", "nob"),
    ("Norwegian Nynorsk", "nn", "nno", "nno"),
    ("Persian", "fa", "per", "fas"),
    ("Polish", "pl", "pol", "pol"),
    ("Portuguese", "pt", "por", "por"),
    ("Punjabi", "pa", "pan", "pan"),
    ("Quechua", "qu", "que", "que"),
    ("Romanian", "ro", "rum", "ron"),
    ("Russian", "ru", "rus", "rus"),
    ("Scottish Gaelic", "gd", "gla", "gla"),
    ("Serbian", "sr", "srp", "srp"),
    ("Sinhala", "si", "sin", "sin"),
    ("Slovak", "sk", "slo", "slk"),
    ("Slovenian", "sl", "slv", "slv"),
    ("Somali", "so", "som", "som"),
    ("Spanish", "es", "spa", "spa"),
    ("Swahili", "sw", "swa", "swa"),
    ("Swedish", "sv", "swe", "swe"),
    ("Tagalog", "tl", "tgl", "tgl"),
    ("Tamil", "ta", "tam", "tam"),
    ("Telugu", "te", "tel", "tel"),
    ("Thai", "th", "tha", "tha"),
    ("Turkish", "tr", "tur", "tur"),
    ("Ukrainian", "uk", "ukr", "ukr"),
    ("Urdu", "ur", "urd", "urd"),
    ("Vietnamese", "vi", "vie", "vie"),
    ("Welsh", "cy", "wel", "cym"),
    ("Xhosa", "xh", "xho", "xho"),
    ("Yoruba", "yo", "yor", "yor"),
    ("Zulu", "zu", "zul", "zul"),
)

# Codes that say "no particular language"; display titles leave them out.
SPECIAL_LANGUAGE_CODES = frozenset({"mis", "mul", "und", "zxx"})

_TWO_TO_THREE = {two: b for _name, two, b, _t in _LANGUAGES if two}
_NAMES = {code: name for name, _two, b, t in _LANGUAGES for code in (b, t)}


def normalize_language(code: str | None) -> str | None:
    """A stream language tag as a lower-case three-letter code ("en", "en-US", "ENG" -> "eng").

    Unknown three-letter codes pass through lower-cased; empty or unusable tags give None.
    """
    if not code:
        return None
    value = code.strip().replace("_", "-").split("-", 1)[0].lower()
    if len(value) == 2:
        return _TWO_TO_THREE.get(value)
    if len(value) == 3 and value.isalpha():
        return value
    return None


def language_display_name(code: str | None) -> str | None:
    """English name of a three-letter code (B or T form), or None when not known."""
    if not code:
        return None
    return _NAMES.get(code.lower())


_THREE_TO_TWO = {code: two for _name, two, b, t in _LANGUAGES if two for code in (b, t)}


def to_two_letter(code: str | None) -> str | None:
    """An ISO 639-1 code for a two- or three-letter code ("eng" -> "en"), or None."""
    three = normalize_language(code)
    return _THREE_TO_TWO.get(three) if three else None
