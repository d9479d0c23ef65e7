"""The ratings file: a game counts once, also when the process rating it is killed mid-update; places and ties
move ratings as the Plackett-Luce model says; keys prove an entrant; ``parsimonia ratings`` prints the ladder and
says in one line what is wrong with a directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server.ratings.store import RATINGS_FILE, RatingsError, RatingStore, rate_result
from tests.server.cli.test_main import run

NAMES = ["Ada", "Bea", "Cy", "Dot"]


def ladder(path: Path) -> list[dict[str, object]]:
    with RatingStore(path) as store:
        return [r.to_dict() for r in store.ladder()]


def test_a_game_rated_twice_counts_once(tmp_path):
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        assert store.rate("g1", "parsimonia", NAMES, [1, 2, 3, 4])
        once = [r.to_dict() for r in store.ladder()]
        assert not store.rate("g1", "parsimonia", NAMES, [4, 3, 2, 1])
        assert [r.to_dict() for r in store.ladder()] == once
    assert [r["entrant"] for r in once] == NAMES and all(r["games"] == 1 for r in once)
    mus = [r["mu"] for r in once]
    assert mus == sorted(mus, reverse=True) and mus[0] > 25 > mus[-1]
    assert all(r["sigma"] < 25 / 3 and r["ordinal"] == pytest.approx(r["mu"] - 3 * r["sigma"], abs=1e-3)
               for r in once)


def test_seats_sharing_a_place_move_alike_and_games_are_per_game(tmp_path):
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        assert store.rate("g1", "kupcy", NAMES[:3], [1, 1, 3])
        assert store.rate("g2", "parsimonia", NAMES[:2], [2, 1])
        kupcy = {r.entrant: r for r in store.ladder("kupcy")}
        assert kupcy["Ada"].mu == kupcy["Bea"].mu > kupcy["Cy"].mu
        assert {r.entrant: r.games for r in store.ladder("parsimonia")} == {"Bea": 1, "Ada": 1}
        assert len(store.ladder()) == 5


def test_a_name_is_one_entrant_whatever_its_case_and_a_lone_rated_seat_rates_nothing(tmp_path):
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        assert store.rate("g1", "parsimonia", ["Ada", "Bea"], [1, 2])
        assert store.rate("g2", "parsimonia", ["ADA", "bea"], [1, 2])
        assert {r.entrant: r.games for r in store.ladder()} == {"ADA": 2, "bea": 2}  # as last spelled
        assert not store.rate("g3", "parsimonia", ["Ada", "ada"], [1, 2])  # one entrant twice: not a game
        assert not rate_result(store, "g4", "parsimonia", ["Ada", None, None],
                               {"scores": [3, 2, 1], "winners": [0]})
        assert not store.rated("g3") and not store.rated("g4")


def test_a_result_rates_its_registered_seats_among_themselves_by_place(tmp_path):
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        result = {"scores": [500, 900, 700, 900], "winners": [1, 3]}
        assert rate_result(store, "t1", "parsimonia", ["Ada", None, "Cy", "Dot"], result)
        got = {r.entrant: r for r in store.ladder()}
        assert set(got) == {"Ada", "Cy", "Dot"}
        assert got["Dot"].mu > got["Cy"].mu > got["Ada"].mu
        assert not rate_result(store, "t2", "parsimonia", ["Ada", "Cy"], {"winners": [0]})  # no scores


def test_a_key_proves_its_entrant_until_another_is_issued(tmp_path):
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        first = store.issue_key("greedy-1")
        assert store.entrant_of_key(first) == "greedy-1"
        assert store.entrant_of_key("greedy-1") is None and store.entrant_of_key("x" * 32) is None
        second = store.issue_key("GREEDY-1")
        assert store.entrant_of_key(first) is None and store.entrant_of_key(second) == "GREEDY-1"
        with pytest.raises(RatingsError):
            store.issue_key(" spaced ")
    assert first.encode() not in (tmp_path / RATINGS_FILE).read_bytes()  # only its hash is kept


RATER = """
import sys
from server.ratings.store import RatingStore
names = ["e%d" % i for i in range(6)]
with RatingStore(sys.argv[1]) as store:
    for g in range(int(sys.argv[2])):
        seats = [names[(g + k) % 6] for k in range(4)]
        store.rate("g%d" % g, "parsimonia", seats, [1 + (g * 7 + k * 3) % 4 for k in range(4)], at="2026-01-01")
        if g == 20:
            print("rating", flush=True)
"""


def test_a_rater_killed_mid_update_leaves_every_game_counted_once(tmp_path):
    """kill -9 while games are being rated; rating every game again afterwards gives the ratings of one clean
    pass: no game was half applied, none counts twice."""
    games = 400
    killed = tmp_path / "killed" / RATINGS_FILE
    proc = subprocess.Popen([sys.executable, "-c", RATER, str(killed), str(games)], stdout=subprocess.PIPE,
                            cwd=Path(__file__).parents[3])
    assert proc.stdout is not None and proc.stdout.readline() == b"rating\n"
    time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with RatingStore(killed) as store:
        done = sum(store.rated(f"g{g}") for g in range(games))
        assert 21 <= done < games  # killed with games still to rate (else this test proves nothing)
        assert sum(r.games for r in store.ladder()) == 4 * done  # each rated game moved its 4 seats, once
    clean = tmp_path / "clean" / RATINGS_FILE
    for path in (killed, clean):
        subprocess.run([sys.executable, "-c", RATER, str(path), str(games)], check=True, capture_output=True,
                       cwd=Path(__file__).parents[3])
    assert ladder(killed) == ladder(clean)
    assert sum(r["games"] for r in ladder(killed)) == 4 * games


def test_ratings_command_prints_the_ladder_and_json(tmp_path, capsys):
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        store.rate("g1", "parsimonia", ["Ada", "Bea"], [1, 2], at="2026-12-04T18:00:00Z")
        store.rate("g2", "kupcy", ["Ada", "Bea", "Cy"], [3, 2, 1], at="2026-12-04T19:00:00Z")
    code, out, err = run(capsys, "ratings", "--data", str(tmp_path), "--json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert [(r["entrant"], r["game"]) for r in rows] == [("Cy", "kupcy"), ("Bea", "kupcy"), ("Ada", "kupcy"),
                                                         ("Ada", "parsimonia"), ("Bea", "parsimonia")]
    assert set(rows[0]) == {"entrant", "game", "mu", "sigma", "ordinal", "games", "last_played"}
    assert rows[0]["last_played"] == "2026-12-04T19:00:00Z" and rows[0]["games"] == 1
    code, out, err = run(capsys, "ratings", "--data", str(tmp_path), "--game", "parsimonia")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["entrant", "game", "mu", "sigma", "ordinal", "games", "last", "played"]
    assert [line.split()[0] for line in lines[1:]] == ["Ada", "Bea"]


@pytest.mark.parametrize("case", ["missing", "empty", "not sqlite"])
def test_ratings_command_says_in_one_line_what_is_wrong_with_the_directory(tmp_path, capsys, case):
    data = tmp_path / "data"
    if case != "missing":
        data.mkdir()
    if case == "not sqlite":
        (data / RATINGS_FILE).write_text("not a database, not at all, no" * 10)
    code, out, err = run(capsys, "ratings", "--data", str(data))
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("parsimonia ratings: ")
    assert {"missing": "no such directory", "empty": "no ratings here yet",
            "not sqlite": "not a ratings file"}[case] in err
    assert case != "empty" or not (data / RATINGS_FILE).exists()  # reading made no file


def test_ratings_command_issues_a_key_that_proves_the_entrant(tmp_path, capsys):
    code, out, err = run(capsys, "ratings", "--data", str(tmp_path), "--issue", "greedy-1")
    key = out.splitlines()[-1]
    assert code == 0 and len(key) == 32
    with RatingStore(tmp_path / RATINGS_FILE) as store:
        assert store.entrant_of_key(key) == "greedy-1"


def test_ratings_and_ladder_read_the_directory_a_tournament_writes_by_default():
    from server.cli.args import build_parser

    parser = build_parser()
    tournament = parser.parse_args(["tournament", "--roster", "r.toml"]).data
    assert parser.parse_args(["ratings"]).data == tournament
    assert parser.parse_args(["ladder", "--roster", "r.toml"]).data == tournament
