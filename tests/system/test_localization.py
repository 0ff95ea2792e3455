"""Localization data (countries, cultures, UI languages, parental ratings) and bundled images."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from PIL import Image

from server.resources import resources_dir
from server.system.localization import LocalizationData, LocalizationDataError, bundled_localization

RESOURCES = Path(__file__).resolve().parents[2] / "resources"


@pytest.fixture(scope="module")
def data() -> LocalizationData:
    return LocalizationData(RESOURCES / "localization")


# -- countries, cultures, options -------------------------------------------------------------


def test_countries_cover_iso_3166_with_jellyfin_fields(data: LocalizationData) -> None:
    countries = data.countries()
    assert len(countries) >= 240
    assert len({c["Name"] for c in countries}) == len(countries)
    for country in countries:
        assert set(country) == {"Name", "DisplayName", "TwoLetterISORegionName", "ThreeLetterISORegionName"}
        assert country["Name"] == country["TwoLetterISORegionName"]
        assert len(country["Name"]) == 2 and country["Name"].isupper()
        assert len(country["ThreeLetterISORegionName"]) == 3 and country["DisplayName"]
    by_code = {c["Name"]: c for c in countries}
    assert by_code["US"]["DisplayName"] == "United States"
    assert by_code["US"]["ThreeLetterISORegionName"] == "USA"
    assert by_code["DE"]["DisplayName"] == "Germany"
    assert by_code["DE"]["ThreeLetterISORegionName"] == "DEU"
    names = [c["DisplayName"] for c in countries]
    assert names.index("Austria") < names.index("Germany") < names.index("Zimbabwe")


def test_cultures_have_three_letter_codes(data: LocalizationData) -> None:
    cultures = data.cultures()
    with_codes = [c for c in cultures if c["ThreeLetterISOLanguageNames"]]
    assert len(with_codes) >= 400
    for culture in cultures:
        assert culture["Name"] and culture["DisplayName"] and culture["TwoLetterISOLanguageName"]
        assert culture["ThreeLetterISOLanguageName"] == culture["ThreeLetterISOLanguageNames"][0]
        assert all(len(code) == 3 for code in culture["ThreeLetterISOLanguageNames"])
    by_two = {c["TwoLetterISOLanguageName"]: c for c in cultures}
    assert by_two["en"]["ThreeLetterISOLanguageNames"] == ["eng"]
    assert by_two["en"]["DisplayName"] == "English"
    assert by_two["de"]["ThreeLetterISOLanguageNames"] == ["ger", "deu"]
    assert by_two["de"]["ThreeLetterISOLanguageName"] == "ger"
    assert by_two["fr"]["ThreeLetterISOLanguageNames"] == ["fre", "fra"]
    assert by_two["pt-br"]["Name"] == "Portuguese (Brazil)"
    assert not {"und", "mul", "zxx"} & {code for c in cultures for code in c["ThreeLetterISOLanguageNames"]}


@pytest.mark.parametrize("query", ["de", "DE", "ger", "deu", "German", "german"])
def test_find_culture_by_any_code_or_name(data: LocalizationData, query: str) -> None:
    culture = data.find_culture(query)
    assert culture is not None and culture["TwoLetterISOLanguageName"] == "de"


def test_find_culture_unknown(data: LocalizationData) -> None:
    assert data.find_culture("klingonese") is None
    assert data.find_culture("") is None
    assert data.find_culture(None) is None


def test_localization_options(data: LocalizationData) -> None:
    options = data.localization_options()
    assert {"Name": "English (United States)", "Value": "en-US"} in options
    values = [o["Value"] for o in options]
    assert len(values) == len(set(values)) >= 40
    assert {"en-GB", "de", "fr", "es", "ja", "zh-CN", "pt-BR"} <= set(values)
    assert {o["Value"]: o["Name"] for o in options}["de"] == "Deutsch"
    assert all(set(o) == {"Name", "Value"} and o["Name"] for o in options)


def test_results_are_copies(data: LocalizationData) -> None:
    data.countries()[0]["Name"] = "XX"
    data.cultures()[0]["ThreeLetterISOLanguageNames"].append("zzz")
    data.parental_ratings("us").clear()
    assert data.countries()[0]["Name"] != "XX"
    assert "zzz" not in data.cultures()[0]["ThreeLetterISOLanguageNames"]
    assert data.parental_ratings("us")


# -- rating levels ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rating", "country", "level"),
    [
        ("G", "us", 0),
        ("PG", "us", 10),
        ("PG-13", "us", 13),
        ("R", "us", 17),
        ("NC-17", "us", 17),
        ("TV-Y", "us", 0),
        ("TV-Y7", "us", 7),
        ("TV-PG", "us", 10),
        ("TV-14", "us", 14),
        ("TV-MA", "us", 17),
        ("pg-13", "US", 13),
        ("U", "gb", 0),
        ("PG", "gb", 8),
        ("12A", "gb", 12),
        ("15", "gb", 15),
        ("R18", "gb", 1000),
        ("FSK 16", "de", 16),
        ("FSK-18", "de", 18),
        ("Tous Publics", "fr", 0),
        ("16", "fr", 16),
        ("PG", "ca", 9),
        ("14A", "ca", 14),
        ("PG", "au", 15),
        ("MA15+", "au", 15),
        ("R18+", "au", 18),
        ("RC", "au", 1001),
        ("AL", "nl", 0),
        ("Livre", "br", 0),
        ("A14", "br", 14),
        ("PG12", "jp", 12),
        ("R15+", "jp", 15),
        ("APTA", "es", 0),
        ("7/i", "es", 7),
        ("Btl", "se", 0),
        ("11", "se", 11),
        ("A", "dk", 0),
        ("PG", "nz", 13),
        ("R16", "nz", 16),
        ("15A", "ie", 15),
    ],
)
def test_rating_levels_per_country(
    data: LocalizationData, rating: str, country: str, level: int | None
) -> None:
    assert data.rating_level(rating, country) == level


@pytest.mark.parametrize(
    ("rating", "country", "level"),
    [
        ("US-PG-13", None, 13),
        ("US-PG-13", "gb", 13),
        ("de/12", None, 12),
        ("DE/FSK 16", "us", 16),
        ("FSK-12", None, 12),
        ("FSK-12", "fr", 12),
        ("TV-MA", "de", 17),
        ("Rated R", None, 17),
        ("Rated: PG", None, 10),
        ("DE: 16", None, 16),
        ("Germany: FSK 18", None, 18),
        ("GB-PG", "us", 8),
        ("UK-15", None, 15),
        ("uk:12A", None, 12),
        ("CAN-14A", None, 14),
        ("PG", "it", 10),
        ("PG", None, 10),
        ("PG", "nowhere", 10),
        ("XXX", "us", 1000),
        ("M", "us", 18),
        ("M", "au", 15),
        ("13", "us", 13),
        ("  PG-13 ", "us", 13),
    ],
)
def test_rating_levels_prefixed_and_fallback(
    data: LocalizationData, rating: str, country: str | None, level: int
) -> None:
    assert data.rating_level(rating, country) == level


@pytest.mark.parametrize(
    "rating",
    [
        "Banana",
        "ZZ-Banana",
        "US-Banana",
        "de/",
        "/",
        "NR",
        "nr",
        "Unrated",
        "Not Rated",
        "N/A",
        "",
        "  ",
        None,
    ],
)
def test_unknown_or_unrated_is_none(data: LocalizationData, rating: str | None) -> None:
    assert data.rating_level(rating, "us") is None


def test_parental_ratings_for_us(data: LocalizationData) -> None:
    ratings = data.parental_ratings("US")
    assert ratings[0] == {"Name": "Unrated", "Value": None}
    values = [r["Value"] for r in ratings[1:]]
    assert values == sorted(values)
    by_name = {r["Name"]: r["Value"] for r in ratings}
    assert by_name["PG-13"] == 13 and by_name["TV-MA"] == 17 and by_name["G"] == 0
    assert by_name["21"] == 21 and by_name["XXX"] == 1000 and by_name["Banned"] == 1001
    # The US already has levels 0, 10, 13 and 14, so those universal entries are not added.
    assert not {"10", "13", "14"} & set(by_name)
    assert [r["Name"] for r in ratings].count("Approved") == 1
    assert all(set(r) == {"Name", "Value"} for r in ratings)


def test_parental_ratings_fill_gaps_with_universal_entries(data: LocalizationData) -> None:
    german = {r["Name"]: r["Value"] for r in data.parental_ratings("de")}
    assert german["FSK-12"] == 12 and german["10"] == 10 and german["13"] == 13 and german["21"] == 21
    assert "Approved" not in german  # FSK 0 is already level 0
    # A known country without its own system gets only the universal entries.
    assert [r["Name"] for r in data.parental_ratings("it")] == [
        "Unrated", "Approved", "10", "13", "14", "21", "XXX", "Banned",
    ]  # fmt: skip


def test_parental_ratings_default_to_us(data: LocalizationData) -> None:
    assert data.parental_ratings(None) == data.parental_ratings("us")
    assert data.parental_ratings("") == data.parental_ratings("us")
    assert data.parental_ratings("uk") == data.parental_ratings("GB")


def test_required_rating_systems_present(data: LocalizationData) -> None:
    required = {"us", "gb", "de", "fr", "ca", "au", "nl", "br", "jp", "es", "se", "dk", "nz", "ie"}
    assert required <= set(data.rating_countries())
    known = {c["Name"].lower() for c in data.countries()}
    assert set(data.rating_countries()) <= known


# -- loading ------------------------------------------------------------------------------------


def test_files_load_once_and_lazily(tmp_path: Path) -> None:
    folder = tmp_path / "localization"
    shutil.copytree(RESOURCES / "localization", folder, ignore=shutil.ignore_patterns("*.py"))
    data = LocalizationData(folder)
    assert data.rating_level("PG-13") == 13
    first = data.countries()
    (folder / "countries.json").unlink()
    shutil.rmtree(folder / "ratings")
    assert data.countries() == first
    assert data.rating_level("TV-14") == 14


def test_missing_folder_fails_on_use_not_construction(tmp_path: Path) -> None:
    data = LocalizationData(tmp_path / "nowhere")
    with pytest.raises(LocalizationDataError):
        data.countries()
    with pytest.raises(LocalizationDataError):
        data.rating_level("PG")


def test_malformed_files_raise_localization_error(tmp_path: Path) -> None:
    folder = tmp_path / "localization"
    shutil.copytree(RESOURCES / "localization", folder, ignore=shutil.ignore_patterns("*.py"))
    (folder / "cultures.json").write_text("[{", encoding="utf-8")
    (folder / "ratings" / "de.json").write_text(json.dumps({"FSK 12": "twelve"}), encoding="utf-8")
    data = LocalizationData(folder)
    with pytest.raises(LocalizationDataError):
        data.cultures()
    with pytest.raises(LocalizationDataError):
        data.parental_ratings("de")


def test_resources_dir_from_checkout_and_when_frozen(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert resources_dir() == RESOURCES
    assert (resources_dir() / "localization" / "countries.json").is_file()
    assert bundled_localization().folder == RESOURCES / "localization"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert resources_dir() == tmp_path / "resources"


# -- branding and icons -------------------------------------------------------------------------


def test_app_icon_files(tmp_path: Path) -> None:
    icons = RESOURCES / "icons"
    with Image.open(icons / "reelroom-1024.png") as master:
        assert master.size == (1024, 1024) and master.mode == "RGBA"
        assert master.getpixel((0, 0))[3] == 0  # rounded corners are transparent
        assert master.getpixel((512, 512 - int(1024 * 0.3)))[3] == 255
    for side in (16, 32, 48, 64, 128, 256, 512):
        with Image.open(icons / f"reelroom-{side}.png") as png:
            assert png.size == (side, side)
    with Image.open(icons / "reelroom.ico") as ico:
        assert {(16, 16), (32, 32), (48, 48), (256, 256)} <= set(ico.info["sizes"])
    with Image.open(icons / "reelroom.icns") as icns:
        assert icns.format == "ICNS" and icns.size[0] >= 512
    svg = ElementTree.parse(icons / "reelroom.svg").getroot()
    assert svg.tag.endswith("svg") and svg.get("viewBox") == "0 0 1024 1024"


def test_default_branding() -> None:
    branding = RESOURCES / "branding"
    with Image.open(branding / "splashscreen.png") as splash:
        assert splash.size == (1920, 1080)
        corner, middle = splash.convert("L").getpixel((5, 5)), splash.convert("L").getpixel((960, 540))
        assert corner < 60  # a dark background
    assert middle != corner
    assert (branding / "custom.css").read_text(encoding="utf-8").strip() == ""


def test_resources_stay_small() -> None:
    total = sum(
        p.stat().st_size for p in RESOURCES.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    assert total < 3 * 1024 * 1024
