"""A turn: draw, act, draw, act with a different action; keep and give by festival place; add face up or down;
the clock's default action; the turn order and the end after equal turns."""

from __future__ import annotations

from server.games.tulips.phases import Action

from .conftest import Table, card, make_table, stack, to_festival


def arrange(order: tuple[str, ...], draws: list[tuple[str, int]], players: int = 3, **cfg) -> Table:
    """A table whose festival ranks ``order`` (1st first) and whose seat 0 draws ``draws`` in turn."""
    t = make_table(players, first_seat=0, **cfg)
    g = t.g
    for c in list(g.festival.cards):  # start the festival again from nothing
        g.festival.cards.remove(c)
        g.deck.append(c)
    g.festival.totals, g.festival.order = {}, []
    for i, variety in enumerate(reversed(order)):
        for _ in range(i + 1):
            to_festival(g, card(g, variety, 4))
    assert g.festival.order == list(order)
    picked: list[int] = []
    for variety, value in draws:
        picked.append(card(g, variety, value, tuple(picked)))
    stack(g, *picked)
    t.choose_all()
    return t


def test_a_drawn_card_is_seen_by_its_drawer_alone_until_it_is_played():
    t = arrange(("pink", "blue"), [("orange", 3), ("purple", 2)])
    g = t.g
    drawn = t.last("card_drawn")
    assert drawn.audience == frozenset({0}) and drawn.data["card"] == g.drawn
    assert drawn.redacted_wire() == {"type": "card_drawn", "at": 0, "seat": 0, "deadline": drawn.data["deadline"]}
    assert g.private_view(0)["drawn"] == g.drawn and g.private_view(1)["drawn"] is None
    public = g.public_view()
    assert public["drawing"] is True and g.drawn not in public["festival"]["cards"]
    card_played = g.drawn
    [kept, second] = t.do(0, "keep")
    assert kept.type == "kept" and kept.audience is None and kept.data["card"] == card_played
    assert second.type == "card_drawn" and second.audience == frozenset({0})


def test_keep_scores_by_the_place_of_the_variety_and_an_unranked_variety_counts_as_4th():
    for order, variety, points in [(("pink", "blue", "orange", "purple"), "orange", 1),
                                   (("pink", "blue", "orange", "purple"), "purple", 2),
                                   (("pink", "blue", "orange", "purple"), "pink", 0),
                                   (("pink", "blue", "orange", "purple"), "blue", 0),
                                   (("pink", "blue"), "orange", 2)]:
        t = arrange(order, [(variety, 3)])
        kept_card = t.g.drawn
        [kept, _] = t.do(0, "keep")
        assert kept.data["points"] == points and t.g.points[0] == points, (order, variety)
        assert kept_card in t.g.bouquets[0]


def test_give_scores_the_card_value_plus_the_place_bonus_and_the_card_goes_to_the_other_bouquet():
    for variety, value, points in [("pink", 4, 7), ("blue", 2, 4), ("orange", 3, 4), ("purple", 2, 2)]:
        t = arrange(("pink", "blue", "orange"), [(variety, value)])
        given = t.g.drawn
        [event, _] = t.do(0, "give", to=2)
        assert event.data == {"seat": 0, "to": 2, "card": given, "place": min(4, 1 + ["pink", "blue", "orange",
                                                                                      "purple"].index(variety)),
                              "points": points}
        assert given in t.g.bouquets[2] and t.g.points == [points, 0, 0]


def test_one_cannot_give_to_oneself_or_to_a_seat_not_at_the_table():
    t = arrange(("pink", "blue"), [("pink", 2)])
    t.refuse(0, "no_such_seat", "give", to=0)
    t.refuse(0, "no_such_seat", "give", to=5)


def test_the_second_card_takes_a_different_action():
    t = arrange(("pink", "blue"), [("pink", 2), ("blue", 2)])
    t.do(0, "keep")
    t.refuse(0, "action_used", "keep")
    assert {c["type"] for c in t.g.legal_actions(0)} == {"give", "add"}
    t.do(0, "give", to=1)
    assert t.g.current == 1 and t.last("turn_ended").data == {"seat": 0, "turn": 1}


def test_adding_face_up_or_face_down_is_the_same_action():
    t = arrange(("pink", "blue"), [("orange", 2), ("purple", 3)])
    t.do(0, "add", secret=True)
    t.refuse(0, "action_used", "add", secret=False)
    assert [c for c in t.g.legal_actions(0) if c["type"] == "add"] == []


def test_adding_face_up_re_ranks_the_festival():
    t = arrange(("pink", "blue", "orange"), [("orange", 4)])  # totals 4, 8, 12: orange 4 + 4 = 8 ties blue
    added_card = t.g.drawn
    [added, _] = t.do(0, "add", secret=False)
    assert added.audience is None and added.data["card"] == added_card
    assert added.data["ranking"] == [["pink", 12], ["orange", 8], ["blue", 8]]  # the grown variety takes the tie
    assert t.g.festival.place("blue") == 3


def test_a_card_added_face_down_stays_hidden_from_everyone_but_its_contributor():
    t = arrange(("pink", "blue"), [("orange", 2), ("purple", 3)])
    hidden_card = t.g.drawn
    [hidden, _] = t.do(0, "add", secret=True)
    assert hidden.audience == frozenset({0}) and hidden.data == {"seat": 0, "card": hidden_card}
    assert hidden.redacted_wire() == {"type": "hidden", "at": 0, "seat": 0}
    assert hidden_card in t.g.private_view(0)["my_secret"]
    assert hidden_card not in t.g.private_view(1)["my_secret"]
    assert t.g.public_view()["players"][0]["secret"] == 2 and t.g.public_view()["secret_count"] == 4


def test_when_the_action_time_runs_out_the_card_is_kept_or_if_keep_is_used_added_face_down():
    t = arrange(("pink", "blue"), [("orange", 2), ("purple", 3)], action_ms=1000)
    first, = [t.g.drawn]
    t.at(999)
    assert t.g.drawn == first
    t.at(1000)
    assert [e.type for e in t.log[-3:]] == ["timed_out", "kept", "card_drawn"]
    assert t.last("timed_out").data == {"seat": 0, "action": "keep"} and first in t.g.bouquets[0]
    second = t.g.drawn
    t.at(2000)
    assert t.last("timed_out").data == {"seat": 0, "action": "add"} and t.last("hidden").data["card"] == second
    assert t.g.current == 1 and (second, 0) in t.g.secret


def test_the_default_after_a_give_is_keep():
    t = arrange(("pink", "blue"), [("orange", 2), ("purple", 3)], action_ms=1000)
    t.do(0, "give", to=1)
    assert t.g.default_action() == Action.KEEP
    t.at(t.g.next_deadline())
    assert t.last("timed_out").data["action"] == "keep"


def test_turns_go_round_from_the_first_seat_and_the_game_ends_when_everyone_had_the_same_number():
    t = make_table(4, first_seat=2, action_ms=100)
    t.choose_all()
    seats = []
    while not t.g.over:
        seats.append(t.g.current)
        t.at(t.g.next_deadline())
        t.at(t.g.next_deadline())
    assert seats == [2, 3, 0, 1] * 7
    assert [sum(1 for e in t.events("turn_ended") if e.data["seat"] == s) for s in range(4)] == [7] * 4
    assert not t.g.deck and t.g.phase == "over"
    t.refuse(0, "game_over", "keep")
