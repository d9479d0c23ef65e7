"""Property tests: random legal (and illegal) play from many seeds and table sizes keeps the engine's laws.

After every step: dollars are conserved; every card is in exactly one place; nobody is committed beyond their
dollars; every legal template is accepted at its range ends; a refused command changes nothing; an accepted
command is one that ``legal_actions`` offered (``vote_end`` aside). Every game ends.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from protocol.schema import SchemaError
from server.games import IllegalAction, new_game
from server.games.machines.auction import committed
from server.games.parsimonia import Parsimonia
from server.games.parsimonia.commands import COMMANDS
from server.games.parsimonia.config import DEFAULT_BANK
from server.games.parsimonia.phases import Phase, Step
from server.cli.simulate import simulate

RESOURCE, TOURISTS = "resource", "tourists"

# A tiny deck makes full sets, reshuffles, empty decks, empty hands and unpairable types common.
TINY_DECK = {
    "resources": [{"type": 1, "profit": 10}, {"type": 2, "profit": 20}, {"type": 1, "profit": 15}],
    "tourists": [
        {"type": 1, "profit": 10},
        {"type": 2, "profit": 25},
        {"type": 3, "profit": 30},
        {"type": 1, "profit": 5},
    ],
}
SMALL_DECK = {
    "resources": [{"type": 1 + i % 3, "profit": 5 * i} for i in range(9)],
    "tourists": [{"type": 1 + i % 3, "profit": 5 * i} for i in range(9)],
}
# Many cards of one type: buyers often hold several free cards of a bought card's type (a choice is owed).
ONE_TYPE_DECK = {
    "resources": [{"type": 1, "profit": 5 * i} for i in range(8)],
    "tourists": [{"type": 1, "profit": 3 * i} for i in range(10)],
}
TABLES = [  # (options, time_scale)
    ({}, 1.0),
    ({}, 60.0),
    ({"start_dollars": 60}, 1.0),
    ({"start_dollars": 100, "bank": 700, "quiet_ms": 5_000}, 30.0),
    ({"start_dollars": 40, "bank": 300, "deck": SMALL_DECK}, 10.0),
    ({"start_dollars": 30, "bank": 200, "deck": TINY_DECK}, 10.0),
    ({"start_dollars": 50, "bank": 400, "deck": ONE_TYPE_DECK}, 10.0),
    ({"opening_ms": 3, "turn_ms": 2, "quiet_ms": 1, "game_ms": 60, "deck": SMALL_DECK}, 1.0),  # minimum clocks
    ({"turn_ms": 1_000, "quiet_ms": 600_000, "opening_ms": 500}, 1.0),  # auctions outlive turns
]


# ---------------------------------------------------------------- the laws


def card_places(g: Parsimonia) -> Counter:
    places: list[int] = []
    for hand in g.hands:
        places += hand
    places += list(g.on.values()) + g.deck + g.aside + g.company_cards + list(g.bought)
    for a in g.auctions.values():
        places += list(a.lot)
    if g.drawn is not None:
        places.append(g.drawn)
    return Counter(places)


def check_invariants(g: Parsimonia) -> None:
    kind = {c: g.cards[c].kind for c in g.cards}

    # dollars
    assert sum(g.dollars) + g.company_dollars == g.cfg.bank, "dollars created or lost"
    assert g.company_dollars >= 0 and min(g.dollars) >= 0
    lone = {a.id: t for a in g.auctions.values() if (t := g.lone_tourists_type(a)) is not None}
    assert list(g.lone_lots.items()) == list(lone.items()), "the index of lone tourists lots drifted"
    for s in range(g.n):
        assert g.committed(s) == committed(g.auctions.values(), s), f"seat {s}: the kept commitment drifted"
        assert g.committed(s) <= g.dollars[s], f"seat {s} committed beyond its dollars"

    # cards: each exactly once, each kind where it may be
    places = card_places(g)
    assert set(places) == set(g.cards), "a card is nowhere (or an unknown card appeared)"
    assert all(k == 1 for k in places.values()), f"cards in two places: {[c for c, k in places.items() if k > 1]}"
    assert all(kind[c] == RESOURCE for h in g.hands for c in h)
    assert all(kind[c] == TOURISTS for c in g.deck + g.aside)
    assert g.drawn is None or kind[g.drawn] == TOURISTS
    lots = {c for a in g.auctions.values() for c in a.lot}
    holders = {c for h in g.hands for c in h} | set(g.company_cards) | lots
    for r, t in g.on.items():
        assert kind[r] == RESOURCE and kind[t] == TOURISTS
        assert r in holders, f"tourists card {t} lies on resource card {r}, which is nowhere"

    # seats that left hold nothing and take part in nothing
    assert sum(g.active) >= 1
    for s in range(g.n):
        if not g.active[s]:
            assert g.dollars[s] == 0 and g.hands[s] == []
            assert all(s not in a.bids and s not in (a.seller, a.starter) for a in g.auctions.values())
            assert s not in g.ready and s not in g.end_votes

    # auctions and clocks
    for a in g.auctions.values():
        assert a.seller not in a.bids
        assert all(amount > a.start_price for amount in a.bids.values())
        assert g.timers.get(("auction", a.id)) == a.closes_at
        card_type = g.lone_tourists_type(a)
        if card_type is not None:
            assert all(g.room_for(b, card_type) >= 1 for b in a.bids), "a bid without room for its card stands"

    # bought cards still owed: their buyer is in the game and has a real choice, until a deadline
    for card, buyer in g.bought.items():
        assert kind[card] == TOURISTS and g.active[buyer]
        assert g.room_for(buyer, g.cards[card].type) >= 1
        assert g.timers.get(("bought", card)) is not None
    deadline = g.next_deadline()
    if g.over:
        assert g.phase == Phase.OVER and deadline is None and not g.auctions and g.drawn is None and not g.bought
        assert all(g.legal_actions(s) == [] for s in range(g.n))
    else:
        assert sum(g.active) >= 2
        assert deadline is not None and deadline > g.now, "a due deadline was not fired"
        assert g.timers.get("game") is not None
    if g.drawn is not None:
        assert g.phase == Phase.TURNS and g.step in (Step.DECIDE, Step.PLACE) and not g.turn_over
        assert g.active[g.current]


def clone(g: Parsimonia) -> Parsimonia:
    """A deep copy; the immutable config and card table are shared, which keeps it cheap."""
    return copy.deepcopy(g, {id(g.cfg): g.cfg, id(g.cards): g.cards})


def is_range(v: Any) -> bool:
    return isinstance(v, dict) and set(v) == {"min", "max"}


def range_ends(template: dict[str, Any]) -> list[dict[str, Any]]:
    """The template with every range at its minimum, then at its maximum (once if there is no range)."""
    lo = {k: v["min"] if is_range(v) else v for k, v in template.items()}
    hi = {k: v["max"] if is_range(v) else v for k, v in template.items()}
    return [lo] if lo == hi else [lo, hi]


def check_templates(g: Parsimonia) -> None:
    """Every template each seat is offered is accepted at its range ends (on a copy), and keeps the laws."""
    if g.over:
        return
    for seat in range(g.n):
        for template in g.legal_actions(seat):
            assert template["type"] in COMMANDS
            for v in template.values():
                if is_range(v):
                    assert v["min"] <= v["max"], template
            for command in range_ends(template):
                trial = clone(g)
                try:
                    trial.apply(seat, command, g.now)
                except (IllegalAction, SchemaError) as exc:
                    raise AssertionError(f"seat {seat}: legal command {command} refused: {exc}") from exc
                check_invariants(trial)


def covered_by(command: dict[str, Any], templates: list[dict[str, Any]]) -> bool:
    extra = {"price"} if command.get("type") == "close" else set()  # a sale's optional price: the engine checks it
    for t in templates:
        if t.keys() != command.keys() - extra:
            continue
        if all(
            (is_range(v) and isinstance(command[k], int) and v["min"] <= command[k] <= v["max"]) or command[k] == v
            for k, v in t.items()
        ):
            return True
    return False


# ---------------------------------------------------------------- random commands, legal or not

_INT = st.one_of(st.integers(-2, 130), st.integers(0, 2_000), st.sampled_from([0, 1, 63, 64, 2**31, 10**10]))
_JUNK = st.sampled_from([True, False, None, "1", 1.5, [], {}])
_VALUE = st.one_of(_INT, _INT, _INT, _JUNK)


@st.composite
def any_command(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 30)) == 0:
        return draw(st.sampled_from([None, [], "ready", {"kind": "ready"}]))
    kinds = [k for k in COMMANDS if k != "quit"] + ["nope"]
    kind = "quit" if draw(st.integers(0, 40)) == 0 else draw(st.sampled_from(kinds))
    command: dict[str, Any] = {"type": kind}
    for name in COMMANDS[kind].required if kind in COMMANDS else ["card"]:
        if draw(st.integers(0, 15)) == 0:
            continue  # a missing field
        if name == "agree":
            command[name] = draw(st.one_of(st.booleans(), _VALUE))
        elif name == "winner":
            command[name] = draw(st.one_of(st.none(), st.integers(-1, 7), _VALUE))
        elif name in ("to",):
            command[name] = draw(st.one_of(st.integers(-1, 7), _VALUE))
        else:
            command[name] = draw(_VALUE)
    if draw(st.integers(0, 15)) == 0:
        command["extra"] = draw(_VALUE)
    return command


# ---------------------------------------------------------------- the state machine


def pick(data: st.DataObject, offers: list[tuple[int, dict[str, Any]]]) -> tuple[int, dict[str, Any]]:
    """One ``(seat, template)``, its command type chosen first, so 30 cards to auction do not crowd out bids."""
    kinds = sorted({t["type"] for _, t in offers})
    if len(kinds) > 1 and "give" in kinds and data.draw(st.integers(0, 3), label="give?") != 0:
        kinds.remove("give")  # always on offer to everyone: it would be a third of all moves
    kind = data.draw(st.sampled_from(kinds), label="kind")
    return data.draw(st.sampled_from([o for o in offers if o[1]["type"] == kind]), label="offer")


def in_range(r: dict[str, int]) -> st.SearchStrategy[int]:
    """Any value of a template's range, often a small one (a start price of thousands stops all bidding)."""
    lo, hi = r["min"], r["max"]
    return st.one_of(st.integers(lo, min(hi, lo + 60)), st.integers(lo, hi))


class ParsimoniaMachine(RuleBasedStateMachine):
    """Drives one engine by legal commands, illegal commands and the clock, and checks the laws after each."""

    @initialize(
        players=st.integers(2, 6),
        seed=st.integers(0, 2**64 - 1),
        table=st.sampled_from(TABLES),
        start_ms=st.sampled_from([0, 1_700_000_000_000]),
    )
    def start(self, players: int, seed: int, table: tuple, start_ms: int) -> None:
        options, time_scale = table
        self.args = (players, seed, options, time_scale)
        self.game = new_game("parsimonia", players, seed, options, time_scale, start_ms=start_ms)
        self.start_ms = start_ms
        self.log: list[list[Any]] = []
        if not options:
            assert self.game.cfg.bank == DEFAULT_BANK == 7_760

    # -- helpers

    def _clock(self, data: st.DataObject) -> int:
        """A moment for a command: now, or later but before the next deadline (never past one without
        ``advance``). The clock is moved there first; nothing fires, so no offer changes."""
        g = self.game
        deadline = g.next_deadline()
        room = 10_000 if deadline is None else deadline - g.now - 1
        at = g.now + data.draw(st.one_of(st.just(0), st.integers(0, max(0, room))), label="delay")
        if at > g.now:
            assert g.advance(at) == []
            self.log.append(["tick", at])
        return at

    def _apply(self, seat: int, command: Any, at: int) -> list:
        events = self.game.apply(seat, command, at)
        self.log.append(["cmd", at, seat, copy.deepcopy(command)])
        assert self.game.now == at
        assert all(e.at == at for e in events)
        return events

    # -- rules

    @precondition(lambda self: not self.game.over)
    @rule(data=st.data())
    def play_a_legal_command(self, data: st.DataObject) -> None:
        g = self.game
        offers = {s: g.legal_actions(s) for s in range(g.n)}
        seats = [s for s in range(g.n) if offers[s]]
        assert seats, "a running game offers nobody anything"
        seat = data.draw(st.sampled_from(seats), label="seat")
        templates = offers[seat]
        staying = [t for t in templates if t["type"] not in ("quit", "vote_end")]
        if staying and data.draw(st.integers(0, 60), label="leave?") != 0:
            templates = staying
        _, template = pick(data, [(seat, t) for t in templates])
        command = {k: data.draw(in_range(v), label=k) if is_range(v) else v for k, v in template.items()}
        at = self._clock(data)
        assert template in g.legal_actions(seat)  # moving the clock alone changes no offer
        self._apply(seat, command, at)

    @precondition(lambda self: bool(self.game.auctions))
    @rule(data=st.data())
    def bid_or_close(self, data: st.DataObject) -> None:
        """Auction moves by anyone (they are rare among the many templates of the opening)."""
        g = self.game
        moves = [(s, t) for s in range(g.n) for t in g.legal_actions(s) if t["type"] in ("bid", "close")]
        if not moves:
            return
        seat, template = pick(data, moves)
        command = {k: data.draw(in_range(v), label=k) if is_range(v) else v for k, v in template.items()}
        self._apply(seat, command, self._clock(data))

    @rule(data=st.data())
    def move_the_clock(self, data: st.DataObject) -> None:
        """To the next deadline, or by a random amount (``advance`` fires every deadline passed on the way)."""
        g = self.game
        before, deadline = g.now, g.next_deadline()
        if deadline is not None and data.draw(st.booleans(), label="to the deadline?"):
            target = deadline
        else:
            target = before + data.draw(
                st.one_of(st.integers(0, 2_000), st.integers(0, g.cfg.quiet_ms), st.integers(0, 2 * g.cfg.turn_ms)),
                label="ms",
            )
        events = g.advance(target)
        self.log.append(["tick", target])
        assert g.now == target
        times = [e.at for e in events]
        assert times == sorted(times) and all(before <= t <= target for t in times)
        if deadline is None or deadline > target:
            assert events == []
        else:
            assert events and times[0] == deadline, "the first deadline fired late or without an event"

    def _try(self, seat: int, command: Any, at: int) -> None:
        """Send a command that may be illegal: refused, it changes nothing; accepted, it was on offer."""
        g = self.game
        offered = g.legal_actions(seat) if 0 <= seat < g.n else []
        before = g.snapshot()
        digest = g.digest()
        try:
            self._apply(seat, command, at)
        except (IllegalAction, SchemaError):
            assert g.snapshot() == before, "a refused command changed the state"
            assert g.digest() == digest
            return
        # vote_end may repeat or withdraw a vote, which is not listed; everything else accepted was offered
        assert isinstance(command, dict)
        if command["type"] != "vote_end":
            assert covered_by(command, offered), f"accepted {command} from seat {seat}, offered {offered}"

    @rule(data=st.data(), command=any_command())
    def send_a_random_command(self, data: st.DataObject, command: Any) -> None:
        seat = data.draw(st.integers(-1, self.game.n), label="seat")
        self._try(seat, command, self._clock(data))

    @precondition(lambda self: not self.game.over)
    @rule(data=st.data())
    def send_a_near_miss_command(self, data: st.DataObject) -> None:
        """Someone's legal command, bent: sent by another seat, a number nudged past its range, or retyped."""
        g = self.game
        offers = [(s, t) for s in range(g.n) for t in g.legal_actions(s) if t["type"] not in ("quit", "vote_end")]
        if not offers:
            return
        seat, template = pick(data, offers)
        command = {k: data.draw(in_range(v), label=k) if is_range(v) else v for k, v in template.items()}
        how = data.draw(st.sampled_from(["seat", "number", "type"]), label="bend")
        if how == "seat":
            seat = data.draw(st.integers(0, g.n - 1), label="other seat")
        elif how == "number":
            fields = [k for k, v in command.items() if k != "type" and isinstance(v, int)]
            if fields:
                name = data.draw(st.sampled_from(fields), label="field")
                r = template[name]
                edges = [r["min"] - 1, r["max"] + 1] if is_range(r) else [command[name] - 1, command[name] + 1]
                command[name] = data.draw(st.sampled_from(edges + [command[name] + 1000]), label="value")
        else:
            command["type"] = data.draw(st.sampled_from(sorted(k for k in COMMANDS if k != "quit")), label="type")
        self._try(seat, command, self._clock(data))

    # -- invariants

    @invariant()
    def laws_hold(self) -> None:
        check_invariants(self.game)

    @invariant()
    def legal_templates_are_accepted_at_their_range_ends(self) -> None:
        check_templates(self.game)

    def teardown(self) -> None:
        # the log replays to the very same state
        if hasattr(self, "game"):
            players, seed, options, time_scale = self.args
            g = new_game("parsimonia", players, seed, options, time_scale, start_ms=self.start_ms)
            for entry in self.log:
                g.advance(entry[1])
                if entry[0] == "cmd":
                    g.apply(entry[2], entry[3], entry[1])
            assert g.digest() == self.game.digest()


TestParsimoniaMachine = ParsimoniaMachine.TestCase
TestParsimoniaMachine.settings = settings(
    max_examples=10,  # 25 took 187 s of a 19-minute suite on the loaded machine, 15 took 82 (every step checks every template)
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ---------------------------------------------------------------- whole games


def check_log_replays_with_laws(sim, templates_every: int) -> None:
    """Replay a simulation's log entry by entry, checking the laws after each (and templates now and then)."""
    g0 = sim.game
    g = new_game("parsimonia", g0.n, g0.seed, g0.cfg.to_wire(), 1.0)  # the simulations play the default deck
    check_invariants(g)
    for i, entry in enumerate(sim.log):
        g.advance(entry[1])
        if entry[0] == "cmd":
            offered = g.legal_actions(entry[2])
            if entry[3]["type"] != "vote_end":
                assert covered_by(entry[3], offered)
            g.apply(entry[2], entry[3], entry[1])
        check_invariants(g)
        if i % templates_every == 0:
            check_templates(g)
    assert g.digest() == g0.digest()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # 15: 82 s loaded
@given(
    players=st.integers(2, 6),
    seed=st.integers(0, 2**32),
    kind=st.sampled_from(["random", "greedy", "mix"]),
    time_scale=st.sampled_from([20.0, 60.0]),
)
def test_random_and_reasoned_play_keeps_the_laws_and_ends(players, seed, kind, time_scale):
    sim = simulate(players, seed, kind, time_scale=time_scale)
    assert sim.game.over
    assert sim.rejected == 0
    assert sim.game.end_reason in ("clock", "agreement", "last_player")
    assert sim.game.now <= sim.game.cfg.game_ms
    assert len(sim.log) < 5_000
    check_invariants(sim.game)
    check_log_replays_with_laws(sim, templates_every=10)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 6), seed=st.integers(0, 2**32), kind=st.sampled_from(["random", "greedy", "mix"]))
def test_full_length_games_end_by_the_game_clock(players, seed, kind):
    # time_scale 1: the real two-hour game, played by the reference players, in simulated time
    sim = simulate(players, seed, kind)
    assert sim.game.over
    assert sim.game.end_reason == "clock"
    assert sim.game.ended_at == sim.game.cfg.game_ms == 120 * 60_000
    assert sim.rejected == 0
    check_invariants(sim.game)
    result = sim.game.result()
    assert result["winners"] and all(result["dollars"][w] == max(result["dollars"]) for w in result["winners"])


@settings(max_examples=25, deadline=None)
@given(players=st.integers(2, 6), seed=st.integers(0, 2**64 - 1), table=st.sampled_from(TABLES))
def test_a_new_table_deals_every_card_and_the_starting_money(players, seed, table):
    options, time_scale = table
    g = new_game("parsimonia", players, seed, options, time_scale)
    check_invariants(g)
    resources = [c for c in g.cards if g.cards[c].kind == RESOURCE]
    sizes = [len(h) for h in g.hands]
    assert sum(sizes) == len(resources)
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)  # first seats get the extra
    assert g.dollars == [g.cfg.start_dollars] * players
    assert sorted(g.deck) == sorted(c for c in g.cards if g.cards[c].kind == TOURISTS)
    check_templates(g)


@settings(max_examples=10, deadline=None)
@given(players=st.integers(2, 6), seed=st.integers(0, 2**64 - 1))
def test_snapshots_are_json_and_equal_for_equal_seeds(players, seed):
    a = new_game("parsimonia", players, seed)
    b = new_game("parsimonia", players, seed)
    assert json.loads(json.dumps(a.snapshot())) == a.snapshot()
    assert a.digest() == b.digest()
