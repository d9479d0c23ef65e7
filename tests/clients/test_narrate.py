"""Names by seat and the result's words, for people."""

from __future__ import annotations

from clients.narrate import result_lines, seat_names


def test_names_two_seats_share_get_their_seat():
    seats = [{"seat": 0, "name": "greedy-bot"}, {"seat": 1, "name": "ann"}, {"seat": 2, "name": "greedy-bot"}]
    assert seat_names(seats) == ["greedy-bot (seat 0)", "ann", "greedy-bot (seat 2)"]


def test_a_game_shorter_than_a_minute_reads_in_seconds_not_0_00():
    result = {"game": "gift-of-tulips", "reason": "festival", "winners": [0], "scores": [30, 20], "game_ms": 420}
    assert result_lines(result, ["a", "b"])[0] == "game over (festival) after 0.4 s"
    assert result_lines({**result, "game_ms": 61_000}, ["a", "b"])[0] == "game over (festival) after 1:01"
