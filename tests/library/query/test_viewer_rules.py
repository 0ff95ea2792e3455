"""A Viewer's parental rules: worked out once per viewer (an Items page asks them several times),
the same rules as the user's policy gives, and a viewer travels to a reader process with them."""

from __future__ import annotations

import pickle

import server.wire.models as w
from server.library.catalog.items import Viewer
from server.library.catalog.query import ParentalRules
from server.users.service import UserRecord


def _user(**policy: object) -> UserRecord:
    return UserRecord(id="a" * 32, name="kid", has_password=False,
                      policy=w.UserPolicy(AuthenticationProviderId="a", PasswordResetProviderId="b", **policy),
                      configuration=w.UserConfiguration(), last_login_date=None, last_activity_date=None,
                      primary_image_tag=None)


def test_parental_rules_are_the_policys_and_made_once() -> None:
    viewer = Viewer(_user(MaxParentalRating=10, BlockedTags=["Gore ", "gore", ""], AllowedTags=["Kids"],
                          BlockUnratedItems=["Movie", "Book", "Movie"]), "us")
    rules = viewer.parental
    assert rules == ParentalRules(max_rating=10, block_unrated=("Book", "Movie"), blocked_tags=("gore",),
                                  allowed_tags=("kids",), country="us")
    assert viewer.parental is rules  # (not made again: the scope, options and reply cache each ask)
    assert viewer.restricted
    # another viewer of the same user (the next request) makes its own, equal rules
    again = Viewer(viewer.user, "us")
    assert again.parental == rules and again.parental is not rules
    assert again == viewer  # the cached rules are no part of its identity
    back = pickle.loads(pickle.dumps(viewer))
    assert back == viewer and back.parental == rules


def test_no_rules_no_user() -> None:
    free = Viewer(_user(), "us")
    assert free.parental is None and free.parental is None
    assert not free.restricted
    assert Viewer(None).parental is None
