"""A request's Viewer (ItemService.viewer) is the same one again while the user's record and the
rating country are the ones it was made of (its parental rules are then worked out once, not on
every Items page); a policy change (a new record) or another rating country makes a new one, with
the new rules."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.conftest import complete_wizard, start_server, stop_server
from tests.library_helpers import new_user


def test_a_viewer_is_kept_until_its_user_or_country_changes(tmp_path: Path) -> None:
    live = start_server(tmp_path / "data")
    try:
        complete_wizard(live)
        with live.admin() as c:
            uid, _token = new_user(c, live, "kid")
        svc = live.ctx.items
        first = asyncio.run(svc.viewer(None, uid))
        assert first.parental is None
        assert asyncio.run(svc.viewer(None, uid)) is first
        assert asyncio.run(svc.viewer(None, live.admin_id)) is not first  # (one per user)
        with live.admin() as c:
            policy = {**c.get(f"/Users/{uid}").json()["Policy"], "MaxParentalRating": 10}
            assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
        second = asyncio.run(svc.viewer(None, uid))
        assert second is not first and second.user is not first.user
        assert second.parental is not None and second.parental.max_rating == 10
        assert asyncio.run(svc.viewer(None, uid)) is second
        svc.rating_country = lambda: "DE"  # (the server's MetadataCountryCode changed)
        third = asyncio.run(svc.viewer(None, uid))
        assert third is not second and third.country == "DE" and third.parental is not None
        assert third.parental.country == "DE"
    finally:
        stop_server(live)
