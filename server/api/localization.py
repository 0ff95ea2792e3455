"""Localization: countries, cultures, UI languages and parental ratings (data in resources/)."""

from __future__ import annotations

from server.api.base import operation
from server.context import ServerContext
from server.system.localization import bundled_localization
from server.wire import models as w


@operation("GetCountries")
async def get_countries() -> list[w.CountryInfo]:
    return [w.CountryInfo(**c) for c in bundled_localization().countries()]


@operation("GetCultures")
async def get_cultures() -> list[w.CultureDto]:
    return [w.CultureDto(**c) for c in bundled_localization().cultures()]


@operation("GetLocalizationOptions")
async def get_localization_options() -> list[w.LocalizationOption]:
    return [w.LocalizationOption(**o) for o in bundled_localization().localization_options()]


@operation("GetParentalRatings")
async def get_parental_ratings(ctx: ServerContext) -> list[w.ParentalRating]:
    country = ctx.config.server().MetadataCountryCode
    return [w.ParentalRating(**r) for r in bundled_localization().parental_ratings(country)]
