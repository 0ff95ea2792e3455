"""Build the localization JSON files in this folder (a dev-time tool, run once, output committed).

    /work/venv/bin/python resources/localization/build_data.py

Sources:
- countries: ISO 3166-1 from pycountry, English display names from babel (CLDR);
- cultures: ISO 639-2 from the iso-codes package's ``iso_639-2.json`` (the same upstream
  data pycountry repackages; pycountry itself ships only 639-3 and 639-5), override the
  path with ``--iso639-2``;
- UI language names: babel (CLDR), each language named in itself;
- parental ratings: the tables below (rating name -> minimum age), on the scale Jellyfin
  10.10 uses: ages 0-18, 1000 for adult-only content, 1001 for banned/refused.

Neither pycountry nor babel is a runtime dependency: the server reads only the JSON.
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from pathlib import Path

import pycountry
from babel import Locale

HERE = Path(__file__).resolve().parent
DEFAULT_ISO639_2 = Path("/usr/share/iso-codes/json/iso_639-2.json")

# ISO 639-2 codes that are not languages a person would pick.
NON_LANGUAGE_CODES = {"mis", "mul", "und", "zxx", "qaa-qtz"}

# Regional variants Jellyfin adds to its culture list so metadata providers can be asked
# for them (TMDb distinguishes pt-BR and fr-CA). Name, two-letter value, three-letter code.
REGIONAL_CULTURES = [
    ("French (Canada)", "fr-ca", "frc"),
    ("Portuguese (Brazil)", "pt-br", "pob"),
]

# UI cultures offered by GET /Localization/Options. The values are the names of the
# web client's translation files, so they keep their mixed '-' / '_' spelling.
UI_CULTURES = [
    "af", "ar", "be", "bg-BG", "bn", "ca", "cs", "cy", "da", "de", "el", "en-GB", "en-US",
    "eo", "es", "es-AR", "es-MX", "es_419", "es_DO", "et", "eu", "fa", "fi", "fil", "fr",
    "fr-CA", "gl", "gsw", "he", "hi", "hr", "hu", "id", "is", "it", "ja", "kk", "ko", "lt",
    "lv", "mk", "ml", "mr", "ms", "nb", "ne", "nl", "nn", "pa", "pl", "pt", "pt-BR", "pt-PT",
    "ro", "ru", "sk", "sl-SI", "sq", "sr", "sv", "ta", "te", "th", "tr", "uk", "ur_PK", "vi",
    "zh-CN", "zh-HK", "zh-TW",
]  # fmt: skip

# CLDR's own-language names that read oddly as a menu entry.
UI_NAME_OVERRIDES = {"id": "Bahasa Indonesia", "ms": "Bahasa Melayu"}

# Parental rating systems: country code -> {rating as written in metadata: minimum age}.
RATINGS: dict[str, dict[str, int]] = {
    "us": {
        "Approved": 0, "G": 0, "TV-G": 0, "TV-Y": 0,
        "TV-Y7": 7, "TV-Y7-FV": 7,
        "PG": 10, "TV-PG": 10, "TV-PG-D": 10, "TV-PG-L": 10, "TV-PG-S": 10, "TV-PG-V": 10,
        "TV-PG-DL": 10, "TV-PG-DS": 10, "TV-PG-DV": 10, "TV-PG-LS": 10, "TV-PG-LV": 10,
        "TV-PG-SV": 10, "TV-PG-DLS": 10, "TV-PG-DLV": 10, "TV-PG-DSV": 10, "TV-PG-LSV": 10,
        "TV-PG-DLSV": 10,
        "PG-13": 13,
        "TV-14": 14, "TV-14-D": 14, "TV-14-L": 14, "TV-14-S": 14, "TV-14-V": 14,
        "TV-14-DL": 14, "TV-14-DS": 14, "TV-14-DV": 14, "TV-14-LS": 14, "TV-14-LV": 14,
        "TV-14-SV": 14, "TV-14-DLS": 14, "TV-14-DLV": 14, "TV-14-DSV": 14, "TV-14-LSV": 14,
        "TV-14-DLSV": 14,
        "NC-17": 17, "R": 17, "TV-MA": 17, "TV-MA-L": 17, "TV-MA-S": 17, "TV-MA-V": 17,
        "TV-MA-LS": 17, "TV-MA-LV": 17, "TV-MA-SV": 17, "TV-MA-LSV": 17,
        "TV-X": 18, "TV-AO": 18,
    },
    "gb": {
        "All": 0, "E": 0, "G": 0, "U": 0, "0+": 0,
        "6+": 6, "7+": 7, "PG": 8, "9": 9,
        "12": 12, "12+": 12, "12A": 12, "12PG": 12,
        "Teen": 13, "13+": 13, "14+": 14, "15": 15, "16": 16,
        "Caution": 18, "18": 18,
        "Mature": 1000, "Adult": 1000, "R18": 1000,
    },
    "de": {
        "Educational": 0, "Infoprogramm": 0, "FSK-0": 0, "FSK 0": 0, "0": 0,
        "FSK-6": 6, "FSK 6": 6, "6": 6,
        "FSK-12": 12, "FSK 12": 12, "12": 12,
        "FSK-16": 16, "FSK 16": 16, "16": 16,
        "FSK-18": 18, "FSK 18": 18, "18": 18,
    },
    "fr": {
        "Public Averti": 0, "Tous Publics": 0, "TP": 0, "U": 0, "0+": 0,
        "6+": 6, "9+": 9, "10": 10, "12": 12, "14+": 14, "16": 16, "18": 18,
        "X": 1000,
    },
    "ca": {
        "E": 0, "G": 0, "TV-Y": 0, "TV-G": 0,
        "TV-Y7": 7, "TV-Y7-FV": 7,
        "PG": 9, "TV-PG": 9,
        "TV-14": 14, "14A": 14, "16+": 16, "NC-17": 17,
        "R": 18, "TV-MA": 18, "18A": 18, "18+": 18,
        "A": 1000, "Prohibited": 1001,
    },
    "au": {
        "Exempt": 0, "G": 0, "7+": 7,
        "PG": 15, "M": 15, "MA": 15, "MA15+": 15, "MA 15+": 15,
        "16+": 16, "R": 18, "R18+": 18, "R 18+": 18, "18+": 18,
        "X18+": 1000, "X 18+": 1000, "X": 1000, "RC": 1001,
    },
    "nl": {"AL": 0, "MG6": 6, "6": 6, "9": 9, "12": 12, "14": 14, "16": 16, "18": 18},
    "br": {
        "Livre": 0, "L": 0, "AL": 0,
        "ER": 10, "10": 10, "A10": 10, "12": 12, "A12": 12, "14": 14, "A14": 14,
        "16": 16, "A16": 16, "18": 18, "A18": 18,
    },
    "jp": {
        "A": 0, "G": 0, "B": 12, "PG12": 12, "C": 15, "15+": 15, "R15+": 15,
        "16+": 16, "D": 17, "Z": 18, "18+": 18,
    },
    "es": {
        "A": 0, "A/fig": 0, "A/i": 0, "A/i/fig": 0, "APTA": 0, "ERI": 0, "TP": 0, "0+": 0,
        "6+": 6, "7/fig": 7, "7/i": 7, "7/i/fig": 7, "7": 7, "9+": 9, "10": 10,
        "12": 12, "12/fig": 12, "13": 13, "14": 14, "16": 16, "16/fig": 16,
        "18": 18, "18/fig": 18, "X": 1000, "Banned": 1001,
    },
    "se": {
        "Alla": 0, "Barntillåten": 0, "Btl": 0, "0+": 0,
        "7": 7, "9+": 9, "10+": 10, "11": 11, "14": 14, "15": 15,
    },
    "dk": {"F": 0, "A": 0, "7": 7, "11": 11, "12": 12, "15": 15, "16": 16},
    "nz": {
        "Exempt": 0, "G": 0, "GY": 13, "PG": 13, "R13": 13, "RP13": 13, "R15": 15,
        "M": 16, "R16": 16, "RP16": 16, "GA": 18, "R18": 18, "RP18": 18,
        "MA": 1000, "R": 1001, "Objectionable": 1001,
    },
    "ie": {
        "G": 4, "PG": 12, "12": 12, "12A": 12, "12PG": 12,
        "15": 15, "15PG": 15, "15A": 15, "16": 16, "18": 18,
    },
    "be": {
        "AL": 0, "KT": 0, "TOUS": 0, "MG6": 6, "6": 6, "9": 9, "KNT": 12, "12": 12,
        "14": 14, "16": 16, "18": 18,
    },
    "cl": {"TE": 0, "TE+7": 7, "14": 14, "18": 18},
    "co": {"T": 0, "7": 7, "12": 12, "15": 15, "18": 18, "X": 1000, "Prohibited": 1001},
    "fi": {
        "S": 0, "T": 0, "K7": 7, "7": 7, "K12": 12, "12": 12, "K16": 16, "16": 16,
        "K18": 18, "18": 18,
    },
    "kz": {"K": 0, "БА": 12, "Б14": 14, "E16": 16, "E18": 18, "HA": 18},
    "mx": {"A": 0, "AA": 0, "B": 12, "B-15": 15, "C": 18, "D": 1000},
    "no": {
        "A": 0, "6": 6, "7": 7, "9": 9, "11": 11, "12": 12, "15": 15, "18": 18, "C": 18,
        "Not approved": 1001,
    },
    "ro": {"AG": 0, "AP-12": 12, "N-15": 15, "IM-18": 18, "IM-18-XXX": 1000, "IC": 1001},
    "ru": {"0+": 0, "6+": 6, "12+": 12, "16+": 16, "18+": 18, "Refused classification": 1001},
    "sk": {"NR": 0, "U": 0, "7": 7, "12": 12, "15": 15, "18": 18},
}  # fmt: skip

# Ratings from older or foreign systems that turn up in metadata of any country; consulted
# after the requested country and the US, before every other system.
PREFERRED_RATINGS = {
    "E": 0, "EC": 0, "T": 7, "M": 18, "AO": 18, "UR": 18, "RP": 18,
    "X": 1000, "XX": 1000, "XXX": 1000, "XXXX": 1000,
}  # fmt: skip

# Rules that hold for every country. UnratedValues resolve to "no rating". Additions are
# appended to every country's selectable list when no rating of that level exists yet
# (AtLeast: when no rating reaches that level); a null Value means "unrated".
UNIVERSAL = {
    "UnratedValues": ["n/a", "unrated", "not rated", "nr"],
    "Additions": [
        {"Name": "Unrated", "Value": None},
        {"Name": "Approved", "Value": 0},
        {"Name": "10", "Value": 10},
        {"Name": "13", "Value": 13},
        {"Name": "14", "Value": 14},
        {"Name": "21", "Value": 21, "AtLeast": True},
        {"Name": "XXX", "Value": 1000},
        {"Name": "Banned", "Value": 1001},
    ],
}


def sort_key(text: str) -> str:
    """Alphabetical order that files "Åland" under A."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def build_countries() -> list[dict[str, str]]:
    english = Locale("en").territories
    rows = []
    for country in pycountry.countries:
        display = english.get(country.alpha_2) or getattr(country, "common_name", None) or country.name
        rows.append(
            {
                "Name": country.alpha_2,
                "DisplayName": display,
                "TwoLetterISORegionName": country.alpha_2,
                "ThreeLetterISORegionName": country.alpha_3,
            }
        )
    rows.sort(key=lambda r: sort_key(r["DisplayName"]))
    return rows


def build_cultures(iso639_2: Path) -> list[dict[str, object]]:
    entries = json.loads(iso639_2.read_text(encoding="utf-8"))["639-2"]
    rows = []
    for entry in entries:
        terminology = entry["alpha_3"]
        if terminology in NON_LANGUAGE_CODES:
            continue
        bibliographic = entry.get("bibliographic")
        # Bibliographic code first, as Jellyfin lists them (e.g. ger, deu).
        codes = [bibliographic, terminology] if bibliographic else [terminology]
        name = entry["name"]
        rows.append(
            {
                "Name": name,
                "DisplayName": name,
                # Languages without an ISO 639-1 code go by their 639-2 code, as .NET cultures do.
                "TwoLetterISOLanguageName": entry.get("alpha_2") or terminology,
                "ThreeLetterISOLanguageName": codes[0],
                "ThreeLetterISOLanguageNames": codes,
            }
        )
    for name, two_letter, three_letter in REGIONAL_CULTURES:
        rows.append(
            {
                "Name": name,
                "DisplayName": name,
                "TwoLetterISOLanguageName": two_letter,
                "ThreeLetterISOLanguageName": three_letter,
                "ThreeLetterISOLanguageNames": [three_letter],
            }
        )
    rows.sort(key=lambda r: sort_key(str(r["DisplayName"])))
    return rows


def build_localization_options() -> list[dict[str, str]]:
    rows = []
    for value in UI_CULTURES:
        locale = Locale.parse(value.replace("-", "_"))
        name = UI_NAME_OVERRIDES.get(value) or locale.get_display_name(locale)
        rows.append({"Name": name[:1].upper() + name[1:], "Value": value})
    rows.sort(key=lambda r: r["Value"].casefold())
    return rows


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, indent=1)
    path.write_text(text + "\n", encoding="utf-8")


def check_ratings() -> None:
    for country, table in RATINGS.items():
        if len(country) != 2 or pycountry.countries.get(alpha_2=country.upper()) is None:
            raise SystemExit(f"ratings for unknown country code {country!r}")
        folded = [name.casefold() for name in table]
        if len(set(folded)) != len(folded):
            raise SystemExit(f"ratings for {country!r} repeat a name (names match case-insensitively)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iso639-2", type=Path, default=DEFAULT_ISO639_2, help="iso-codes' iso_639-2.json")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: this folder)")
    args = parser.parse_args()
    if not args.iso639_2.is_file():
        raise SystemExit(f"{args.iso639_2} not found: install the iso-codes package or pass --iso639-2")

    check_ratings()
    write_json(args.out / "countries.json", build_countries())
    write_json(args.out / "cultures.json", build_cultures(args.iso639_2))
    write_json(args.out / "localization_options.json", build_localization_options())
    for country, table in RATINGS.items():
        write_json(args.out / "ratings" / f"{country}.json", table)
    write_json(args.out / "ratings" / "_preferred.json", PREFERRED_RATINGS)
    write_json(args.out / "ratings" / "_universal.json", UNIVERSAL)


if __name__ == "__main__":
    main()
