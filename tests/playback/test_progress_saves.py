"""How often a playing video's position is saved (``SaveEvery``): at most once every 10 s per
(user, item), and the table only holds the keys saved within that window."""

from server.periodic import SaveEvery


def test_a_key_is_due_once_per_period():
    saves = SaveEvery(10.0)
    assert saves.due(("u", "a"), 100.0)
    assert not saves.due(("u", "a"), 105.0)
    assert not saves.due(("u", "a"), 109.9)
    assert saves.due(("u", "a"), 110.0)
    assert saves.due(("u", "b"), 110.0)  # another item is its own key
    assert saves.due(("v", "a"), 110.0)  # and another user


def test_forget_makes_the_next_report_due():
    saves = SaveEvery(10.0)
    assert saves.due(("u", "a"), 100.0)
    saves.forget(("u", "a"))
    assert saves.due(("u", "a"), 101.0)
    saves.forget(("u", "never"))  # forgetting an unknown key is harmless


def test_the_table_keeps_only_the_keys_of_the_last_period():
    # One report each for 10,000 (user, item) pairs, 0.01 s apart, none of them ever stopped: the
    # table holds about the last 10 s worth of keys, not all 10,000.
    saves = SaveEvery(10.0)
    largest = 0
    for n in range(10_000):
        assert saves.due(("u", str(n)), n * 0.01)
        largest = max(largest, len(saves))
    assert largest <= 2 * 1_000 + 1
    # A key still within its period keeps its throttle across a sweep.
    assert saves.due(("u", "kept"), 100.0)
    for n in range(5_000):
        saves.due(("w", str(n)), 100.0 + n * 0.001)
    assert not saves.due(("u", "kept"), 105.0)
