"""The sealed-choice machine: choices held sealed, defaults at the deadline, one reveal."""

from __future__ import annotations

import pytest

from server.games.base import IllegalAction
from server.games.machines.sealed import SealedChoice
from server.games.machines.timers import Timers


def choice(*seats: int) -> SealedChoice:
    timers = Timers()
    timers.set("bid", 1000)
    return SealedChoice("bid", frozenset(seats), timers)


def test_it_is_complete_once_every_owing_seat_has_chosen():
    c = choice(0, 2)
    c.choose(2, "b")
    assert not c.complete and c.pending == [0] and c.owes(0) and not c.owes(2)
    c.choose(0, "a")
    assert c.complete and c.close(500) == {0: "a", 2: "b"}


def test_a_seat_that_owes_nothing_or_has_chosen_is_refused():
    c = choice(0, 1)
    with pytest.raises(IllegalAction) as info:
        c.choose(3, "x")
    assert info.value.code == "no_choice_owed"
    c.choose(0, "x")
    with pytest.raises(IllegalAction) as info:
        c.choose(0, "y")
    assert info.value.code == "already_chosen" and c.choices[0] == "x"


def test_nothing_is_revealed_before_every_choice_is_in():
    c = choice(0, 1)
    c.choose(0, 5)
    with pytest.raises(ValueError):
        c.close(500)
    assert c.to_view() == {"seats": [0, 1], "chosen": [0], "deadline": 1000}
    assert 5 not in c.to_view().values()


def test_the_deadline_gives_every_missing_seat_its_default():
    c = choice(0, 1, 2)
    c.choose(1, 7)
    c.fill_defaults(lambda seat: -seat)
    assert c.close(500) == {0: 0, 1: 7, 2: -2} and c.defaulted == {0, 2}


def test_the_chosen_event_shows_the_value_to_the_chooser_alone():
    c = choice(0, 1)
    c.choose(1, 9)
    data, audience, redacted = c.chosen_event(1)
    assert data == {"seat": 1, "choice": 9} and audience == {1} and redacted == {"seat": 1}
    assert c.private_view(1) == 9 and c.private_view(0) is None


def test_the_deadline_is_read_from_the_timers_so_a_shift_of_them_moves_it():
    c = choice(0)
    c.timers.shift(250)
    assert c.deadline == 1250 and c.to_view()["deadline"] == 1250


def test_the_reveal_cancels_the_timer_and_keeps_the_deadline_as_it_stood():
    c = choice(0)
    c.choose(0, "a")
    c.timers.shift(250)
    assert c.close(900) == {0: "a"}
    assert "bid" not in c.timers and c.deadline == 1250
    c.timers.shift(100)  # a later pause moves no finished choice
    assert c.to_view()["deadline"] == 1250 and c.snapshot()["deadline"] == 1250


def test_a_reveal_after_the_timer_fired_keeps_the_time_it_fell_due():
    c = choice(0, 1)
    assert c.timers.pop_next_due(1000) == (1000, "bid")
    c.fill_defaults(lambda seat: seat)
    c.close(1000)
    assert c.deadline == 1000 and c.defaulted == {0, 1}
