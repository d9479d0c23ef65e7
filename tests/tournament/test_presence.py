"""Presence: seats read from the server's connections listing, and held tables started when their humans are
connected or their grace is over."""

from __future__ import annotations

from server.tournament.presence import SeatWatch, connected_seats

LISTING = [
    {"conn": 1, "peer": "127.0.0.1:5000", "client": "parsimonia-director", "tables": ["t1", "t2"], "seats": []},
    {"conn": 2, "peer": "10.0.0.7:5001", "client": "web", "tables": ["t1"], "seats": [{"table": "t1", "seat": 1}]},
    {"conn": 3, "peer": "127.0.0.1:5002", "client": "bot", "tables": ["t2"], "seats": [{"table": "t2", "seat": 0}]},
]


def test_the_connections_listing_gives_the_seats_held():
    assert connected_seats(LISTING) == {("t1", 1), ("t2", 0)}
    assert connected_seats([]) == set()


def test_a_held_table_starts_once_every_human_is_connected():
    watch = SeatWatch(grace_s=300)
    watch.follow("t1", {1: "Ada", 2: "Bo"}, held=True, now=0)
    changes = watch.update({("t1", 1), ("t1", 0)}, now=5)
    assert changes.arrived == [("t1", 1, "Ada")] and changes.start == [] and watch.missing("t1") == ["Bo"]
    changes = watch.update({("t1", 1), ("t1", 2)}, now=9)
    assert changes.arrived == [("t1", 2, "Bo")] and changes.start == [("t1", [])] and watch.waiting == {}
    changes = watch.update({("t1", 2)}, now=12)  # once started, a table is not held again
    assert changes.left == [("t1", 1, "Ada")] and changes.start == []


def test_a_held_table_starts_without_the_missing_humans_when_its_grace_is_over():
    watch = SeatWatch(grace_s=300)
    watch.follow("t1", {0: "Ada"}, held=True, now=100)
    watch.follow("t2", {}, held=False, now=100)
    assert watch.update(set(), now=399.5).start == []
    assert watch.update({("t2", 0)}, now=400).start == [("t1", ["Ada"])]
    assert ("t2", 0) in watch.connected and watch.update(set(), now=401).left == []  # a bot's seat is not told


def test_a_forgotten_table_is_neither_watched_nor_started():
    watch = SeatWatch(grace_s=1)
    watch.follow("t1", {0: "Ada"}, held=True, now=0)
    watch.forget("t1")
    changes = watch.update({("t1", 0)}, now=5)
    assert (changes.arrived, changes.start, watch.missing("t1")) == ([], [], [])


def test_a_held_table_waits_for_its_bots_too_each_seat_for_its_own_grace():
    """A bot slow to start (a loaded machine) holds its table's clocks, for the bots' grace at most (#38)."""
    watch = SeatWatch(grace_s=300, bot_grace_s=60)
    watch.follow("t1", {}, held=True, now=0, bots={0: "greedy-1", 1: "random-1"})
    watch.follow("t2", {1: "Ada"}, held=True, now=0, bots={0: "greedy-2"})
    changes = watch.update({("t1", 0), ("t2", 1)}, now=1)
    assert changes.start == [] and changes.seen == [("t1", 0), ("t2", 1)] and changes.arrived == [("t2", 1, "Ada")]
    assert watch.missing("t1") == ["random-1"] and watch.waiting == {"t1": 60, "t2": 300}
    changes = watch.update({("t1", 0), ("t1", 1), ("t2", 1)}, now=2)
    assert changes.start == [("t1", [])] and changes.seen == [("t1", 1)]
    assert watch.update({("t1", 0), ("t1", 1), ("t2", 1)}, now=59).start == []  # t2 waits for its bot
    assert watch.update({("t1", 0), ("t1", 1), ("t2", 1)}, now=60).start == [("t2", ["greedy-2"])]


def test_seats_connected_before_a_table_is_first_seen_count_as_seen():
    watch = SeatWatch(grace_s=300, bot_grace_s=60)
    watch.update({("t1", 0)}, now=0)  # the bot connected before the director followed its table
    watch.follow("t1", {}, held=True, now=0, bots={0: "greedy-1"})
    assert "t1" not in watch.observed
    changes = watch.update({("t1", 0)}, now=1)
    assert changes.seen == [("t1", 0)] and changes.start == [("t1", [])] and "t1" in watch.observed
    assert watch.update({("t1", 0)}, now=2).seen == []  # told once
