"""The engine contract in ``server.games.base``: command parsing, digests, events, and the time rules."""

from __future__ import annotations

import hashlib

import pytest

from protocol.schema import SchemaError
from protocol.schema import Int, Record
from server.games import new_game
from server.games.base import Event, Game, IllegalAction, Option, Outcome, canonical_digest, parse_command
from server.games.parsimonia import Parsimonia
from server.games.parsimonia.commands import COMMANDS


def schema_error(raw):
    with pytest.raises(SchemaError) as info:
        parse_command(COMMANDS, raw)
    return info.value


# ---------------------------------------------------------------- parse_command


def test_a_well_formed_command_parses_to_itself():
    raw = {"type": "bid", "auction": 3, "amount": 25}
    assert parse_command(COMMANDS, raw) == raw
    assert parse_command(COMMANDS, {"type": "quit"}) == {"type": "quit"}
    assert parse_command(COMMANDS, {"type": "close", "auction": 1, "winner": None})["winner"] is None


def test_every_catalogued_command_parses_with_in_range_fields():
    samples = {
        "bid": {"auction": 0, "amount": 1},
        "close": {"auction": 0, "winner": 63},
        "give": {"to": 0, "amount": 1_000_000_000},
        "vote_end": {"agree": False},
        "place_bought": {"card": 70, "resource": 3},
        "quit": {},
        "ready": {},
        "auction": {"card": 0, "start_price": 0},
        "pair": {"resource": 2**31 - 1},
        "auction_drawn": {"start_price": 1_000_000_000},
        "place": {"resource": 0},
        "company_auction": {"card": 5, "start_price": 7},
        "end_turn": {},
    }
    assert set(samples) == set(COMMANDS)
    for kind, body in samples.items():
        assert parse_command(COMMANDS, {"type": kind, **body}) == {"type": kind, **body}


@pytest.mark.parametrize("raw", [None, [], "bid", 3, ("type", "quit")])
def test_a_command_that_is_not_a_map_is_refused(raw):
    err = schema_error(raw)
    assert err.code == "bad_field"
    assert err.path == "command"


@pytest.mark.parametrize("kind", ["dance", "", "BID", None, 1, True, ["bid"]])
def test_an_unknown_or_missing_type_is_refused(kind):
    err = schema_error({"type": kind, "auction": 1, "amount": 2})
    assert err.code == "unknown_command"
    assert err.path == "command.type"


def test_a_command_without_type_is_refused():
    assert schema_error({"auction": 1, "amount": 2}).code == "unknown_command"


def test_an_unknown_field_is_refused_and_named():
    err = schema_error({"type": "bid", "auction": 1, "amount": 2, "bonus": 5})
    assert err.code == "unknown_field"
    assert err.path == "command.bonus"
    assert schema_error({"type": "quit", "x": None}).code == "unknown_field"


def test_a_missing_field_is_refused_and_named():
    err = schema_error({"type": "bid", "auction": 1})
    assert err.code == "missing_field"
    assert err.path == "command.amount"


@pytest.mark.parametrize("value", [True, False, 2.0, 2.5, "2", None, [2], {"v": 2}])
def test_an_integer_field_refuses_other_types_including_bools(value):
    err = schema_error({"type": "bid", "auction": 1, "amount": value})
    assert err.code == "bad_field"
    assert err.path == "command.amount"


@pytest.mark.parametrize("value", [0, -1, 1_000_000_001])
def test_an_integer_field_refuses_values_out_of_range(value):
    err = schema_error({"type": "bid", "auction": 1, "amount": value})
    assert err.code == "bad_field"
    assert err.path == "command.amount"


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_a_boolean_field_refuses_non_booleans(value):
    assert schema_error({"type": "vote_end", "agree": value}).code == "bad_field"


@pytest.mark.parametrize("winner", [True, -1, 64, "0"])
def test_a_nullable_seat_refuses_bad_values(winner):
    assert schema_error({"type": "close", "auction": 1, "winner": winner}).code == "bad_field"


def test_a_non_string_key_is_refused():
    assert schema_error({"type": "quit", 1: 2}).code == "bad_field"


def test_game_parse_uses_its_catalogue():
    assert Parsimonia.parse({"type": "end_turn"}) == {"type": "end_turn"}
    with pytest.raises(SchemaError):
        Parsimonia.parse({"type": "end_turn", "now": True})


def test_parse_does_not_change_the_raw_command():
    raw = {"type": "give", "to": 1, "amount": 5}
    copy = dict(raw)
    parse_command(COMMANDS, raw)
    assert raw == copy


# ---------------------------------------------------------------- canonical_digest


def test_digest_is_sha256_of_sorted_compact_json():
    state = {"b": 1, "a": [1, 2, None], "c": {"y": True, "x": "é"}}
    text = '{"a":[1,2,null],"b":1,"c":{"x":"\\u00e9","y":true}}'
    assert canonical_digest(state) == hashlib.sha256(text.encode()).hexdigest()


def test_digest_ignores_key_order_but_not_content():
    assert canonical_digest({"a": 1, "b": [2, 3]}) == canonical_digest({"b": [2, 3], "a": 1})
    assert canonical_digest({"a": 1, "b": [2, 3]}) != canonical_digest({"a": 1, "b": [3, 2]})
    assert canonical_digest({"a": 1}) != canonical_digest({"a": 2})


def test_digest_is_stable_across_calls_and_equal_games():
    a = new_game("parsimonia", 4, 77)
    b = new_game("parsimonia", 4, 77)
    assert a.digest() == a.digest() == b.digest()
    assert a.digest() == canonical_digest(a.snapshot())
    assert a.digest() != new_game("parsimonia", 4, 78).digest()
    assert len(a.digest()) == 64


# ---------------------------------------------------------------- events


def test_event_audience():
    public = Event("bid", 5, {"amount": 3})
    private = Event("card", 5, {}, frozenset({1, 2}))
    assert public.visible_to(None) and public.visible_to(0)
    assert private.visible_to(1) and private.visible_to(2)
    assert not private.visible_to(0)
    assert not private.visible_to(None)


def test_event_wire_form_puts_type_and_time_first():
    assert Event("bid", 12, {"amount": 3, "seat": 1}).to_wire() == {"type": "bid", "at": 12, "amount": 3, "seat": 1}


def test_event_wire_for_gives_outsiders_the_redacted_form_or_nothing():
    dealt = Event("dealt", 7, {"seat": 1, "card": 42}, frozenset({1}), {"seat": 1})
    assert dealt.wire_for(1) == {"type": "dealt", "at": 7, "seat": 1, "card": 42}
    assert dealt.wire_for(0) == dealt.wire_for(None) == {"type": "dealt", "at": 7, "seat": 1}
    secret = Event("peek", 7, {"card": 42}, frozenset({1}))
    assert secret.wire_for(0) == {} and secret.wire_for(1) == {"type": "peek", "at": 7, "card": 42}
    public = Event("bid", 7, {"amount": 3})
    assert public.wire_for(None) == public.wire_for(5) == public.to_wire()


# ---------------------------------------------------------------- a toy game: the contract itself


class Countdown(Game):
    """Seats press a counter; ``limit_ms`` after the start the game ends; whoever pressed most wins."""

    NAME = "countdown"
    TITLE = "Countdown"
    MIN_SEATS = 2
    MAX_SEATS = 3
    COMMANDS = {"press": Record({"times": Int(1, 5)})}
    OPTIONS = {
        "limit_ms": Option(Int(1, 10**9), 60_000, "how long the game lasts", duration=True),
        "target": Option(Int(1, 100), 10, "presses that end the game early"),
        "step": Option(Int(1, 100), 1, "presses a press counts for"),
    }

    def __init__(self, players: int, seed: int, options: dict, start_ms: int) -> None:
        super().__init__(players, seed, start_ms)
        self.options = options
        self.presses = [0] * players
        self.settled = 0
        self.end: str | None = None
        self.timers.set("limit", start_ms + options["limit_ms"])

    @classmethod
    def _check_option_values(cls, options):
        if options["step"] > options["target"]:
            raise ValueError("a step larger than the target")

    @classmethod
    def from_options(cls, players, seed, options, start_ms):
        return cls(players, seed, options, start_ms)

    def _check_seat(self, seat):
        if self.end is not None:
            raise IllegalAction("game_over", "over")

    def _press(self, seat, times):
        self.presses[seat] += times * self.options["step"]
        self._emit("pressed", seat=seat, times=times)

    def _limit(self, key):
        self.end = "clock"

    def _settle(self):
        self.settled += 1
        if self.end is None and max(self.presses) >= self.options["target"]:
            self.end = "target"

    HANDLERS = {"press": _press}
    DEADLINES = {"limit": _limit}

    def public_view(self):
        return {"presses": list(self.presses)}

    def legal_actions(self, seat):
        return [] if self.over else [{"type": "press", "times": {"min": 1, "max": 5}}]

    def outcome(self):
        if self.end is None:
            return None
        best = max(self.presses)
        return Outcome(self.end, tuple(s for s in range(self.n) if self.presses[s] == best), tuple(self.presses))

    def _standing(self):
        return Outcome(None, (), tuple(self.presses))

    def snapshot(self):
        return {"presses": self.presses, "end": self.end, "timers": self.timers.snapshot()}


def test_check_options_fills_in_defaults_and_scales_only_durations():
    assert Countdown.check_options() == {"limit_ms": 60_000, "target": 10, "step": 1}
    assert Countdown.check_options({"target": 20}, time_scale=60) == {"limit_ms": 1_000, "target": 20, "step": 1}
    assert Countdown.check_options({"limit_ms": 3}, time_scale=1000)["limit_ms"] == 1  # never 0 ms


@pytest.mark.parametrize("options, scale, message", [
    ({"colour": "red"}, 1, "options.colour: unknown field"),
    ({"target": 0}, 1, "options.target"),
    ({"target": "ten"}, 1, "options.target"),
    ({"step": 11}, 1, "larger than the target"),
    ([("target", 3)], 1, "a map"),
    ({}, 0, "time_scale"),
    ({}, float("nan"), "time_scale"),
])
def test_check_options_refuses_unknown_or_bad_values(options, scale, message):
    with pytest.raises(ValueError, match=message):
        Countdown.check_options(options, scale)
    with pytest.raises(ValueError):
        Countdown.create(2, 1, options, scale)


def test_create_builds_from_checked_options_and_checks_the_seat_count():
    g = Countdown.create(3, 9, {"target": 4}, time_scale=2, start_ms=100)
    assert g.options == {"limit_ms": 30_000, "target": 4, "step": 1} and g.now == 100
    assert g.next_deadline() == 30_100
    with pytest.raises(ValueError, match="2 to 3"):
        Countdown.create(4, 9)


def test_handlers_dispatch_and_settle_runs_after_every_command_and_deadline():
    g = Countdown.create(2, 1, {"target": 4, "limit_ms": 1000})
    [event] = g.apply(0, {"type": "press", "times": 2}, 10)
    assert event.to_wire() == {"type": "pressed", "at": 10, "seat": 0, "times": 2}
    assert g.settled == 1 and g.presses == [2, 0] and not g.over
    g.apply(1, {"type": "press", "times": 5}, 20)
    assert g.over and g.outcome() == Outcome("target", (1,), (2, 5))
    with pytest.raises(IllegalAction):
        g.apply(0, {"type": "press", "times": 1}, 30)
    g2 = Countdown.create(2, 1, {"limit_ms": 1000})
    assert g2.advance(1000) == [] and g2.settled == 1 and g2.outcome().reason == "clock"
    assert g2.next_deadline() is None


def test_shift_moves_the_timers_and_now():
    g = Countdown.create(2, 1, {"limit_ms": 1000}, start_ms=50)
    g.shift(500)
    assert g.next_deadline() == 1550 == g.timers.get("limit") and g.now == 550 and g.timers.shifted == 500
    with pytest.raises(ValueError):
        g.shift(-1)


def test_outcome_result_and_view():
    g = Countdown.create(2, 77)
    assert g.outcome() is None and not g.over
    assert g.standing() == Outcome(None, (), (0, 0))
    assert g.result() == {"game": "countdown", "seed": 77, "players": 2, "over": False, "reason": None,
                          "winners": [], "scores": [0, 0]}
    assert g.view(1) == {"presses": [0, 0], "seat": 1}
    done = Outcome("clock", (0, 2), (5, 1, 5), {"dollars": [5, 1, 5]})
    assert done.to_wire() == {"reason": "clock", "winners": [0, 2], "scores": [5, 1, 5], "dollars": [5, 1, 5]}


# ---------------------------------------------------------------- time rules of apply/advance


def test_apply_refuses_time_going_backwards():
    g = new_game("parsimonia", 2, 1, start_ms=1000)
    before = g.snapshot()
    with pytest.raises(ValueError, match="backwards"):
        g.apply(0, {"type": "ready"}, 999)
    with pytest.raises(ValueError, match="backwards"):
        g.advance(999)
    assert g.snapshot() == before


def test_apply_refuses_to_run_at_or_after_a_pending_deadline():
    g = new_game("parsimonia", 2, 1)
    deadline = g.next_deadline()
    before = g.snapshot()
    for t in (deadline, deadline + 1):
        with pytest.raises(ValueError, match="advance"):
            g.apply(0, {"type": "ready"}, t)
    assert g.snapshot() == before
    g.advance(deadline)
    g.apply(0, {"type": "vote_end", "agree": True}, deadline)
    assert g.now == deadline


def test_a_malformed_command_is_a_schema_error_and_changes_nothing():
    g = new_game("parsimonia", 2, 1)
    before = g.snapshot()
    with pytest.raises(SchemaError):
        g.apply(0, {"type": "ready", "please": True}, 10)
    assert g.snapshot() == before
    assert g.now == 0


def test_advance_fires_deadlines_and_sets_now():
    g = new_game("parsimonia", 2, 1, time_scale=60)
    opening = g.next_deadline()
    assert g.advance(opening - 1) == []
    assert g.now == opening - 1
    events = g.advance(opening + 5)
    assert events and events[0].type == "opening_ended" and events[0].at == opening
    assert g.now == opening + 5
