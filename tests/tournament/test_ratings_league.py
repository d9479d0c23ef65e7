"""Ratings through the director: every tournament game rates its entrants once; a director started again on a
finished tournament changes nothing; a second tournament in the same data directory moves the same entrants'
ratings, the first one set aside in DATA/past."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import trio

from server.ops import logs
from server.ratings.store import RATINGS_FILE, RatingStore
from server.tournament.director import DirectorConfig, run_tournament
from server.tournament.events import put_aside_finished
from server.tournament.roster import RosterError, load_roster, parse_roster
from server.tournament.store import Store, StoreError
from tests.tournament.test_director import games_by_name, write_roster


@pytest.fixture(autouse=True)
def _quiet_logs() -> None:
    logs.configure(level=logging.WARNING)


def ratings(data: Path) -> dict[str, tuple[float, float, int]]:
    with RatingStore(data / RATINGS_FILE) as store:
        return {r.entrant: (r.mu, r.sigma, r.games) for r in store.ladder("parsimonia")}


async def test_two_tournaments_in_one_directory_rate_the_same_entrants_and_a_restart_changes_nothing(tmp_path):
    first = write_roster(tmp_path / "league.toml", entrants=4, rounds=2, table_size=2)
    second = tmp_path / "league2.toml"
    second.write_text(first.read_text().replace('name = "test league"', 'name = "test league, week 2"'))
    data = tmp_path / "data"
    told: list[str] = []
    with trio.fail_after(240):
        doc = await run_tournament(DirectorConfig(str(first), str(data), port=0, time_scale=600, live=False))
        after_one = ratings(data)
        assert {name: games for name, (_, _, games) in after_one.items()} == games_by_name(doc)
        assert set(games_by_name(doc).values()) == {2}
        await run_tournament(DirectorConfig(str(first), str(data), port=0, time_scale=600, live=False), told.append)
        assert ratings(data) == after_one  # started again on its finished tournament: nothing is played or rated
        doc2 = await run_tournament(DirectorConfig(str(second), str(data), port=0, time_scale=600, live=False),
                                    told.append)
    after_two = ratings(data)
    assert set(after_two) == set(after_one)
    assert all(after_two[n][2] == after_one[n][2] + games_by_name(doc2)[n] == 4 for n in after_two)
    assert all(after_two[n][:2] != after_one[n][:2] for n in after_two)
    assert all(after_two[n][1] < after_one[n][1] for n in after_two)  # more games: surer
    assert f"the finished tournament of this directory is now in {data / 'past' / '1-test_league'}" in told
    with Store(data / "past" / "1-test_league" / "tournament.sqlite") as store:
        assert store.load().roster.name == "test league" and store.load().state == "finished"
    assert (data / "past" / "1-test_league" / "export" / "tournament.json").is_file()


def test_a_tournament_still_being_played_is_not_set_aside(tmp_path):
    first = write_roster(tmp_path / "league.toml", entrants=4, rounds=2, table_size=2)
    other = tmp_path / "other.toml"
    other.write_text(first.read_text().replace("rounds = 2", "rounds = 3"))
    with Store(tmp_path / "tournament.sqlite") as store:
        store.begin(load_roster(first), 3)
    assert put_aside_finished(tmp_path, load_roster(other)) is None
    with Store(tmp_path / "tournament.sqlite") as store, pytest.raises(StoreError, match="another roster"):
        store.begin(load_roster(other), 3)
    with Store(tmp_path / "tournament.sqlite") as store:
        store.set_state("finished")
    renamed = tmp_path / "renamed.toml"  # the same event, an entrant's name fixed: carried on, not set aside
    renamed.write_text(first.read_text().replace('name = "greedy-0"', 'name = "greedy-zero"'))
    assert put_aside_finished(tmp_path, load_roster(renamed)) is None
    assert put_aside_finished(tmp_path, load_roster(other)) == tmp_path / "past" / "1-test_league"
    assert not (tmp_path / "tournament.sqlite").exists()


def test_seating_by_rating_is_a_roster_option_kept_with_the_tournament(tmp_path):
    path = write_roster(tmp_path / "league.toml", entrants=4, rounds=2, table_size=2)
    assert load_roster(path).seating == "standings" and "seating" not in load_roster(path).to_dict()
    path.write_text('seating = "rating"\n' + path.read_text())
    roster = load_roster(path)
    assert roster.seating == "rating" and parse_roster(roster.to_dict()) == roster
    path.write_text(path.read_text().replace('"rating"', '"elo"'))
    with pytest.raises(RosterError, match=r"league.toml:1: seating: must be one of 'standings', 'rating'"):
        load_roster(path)


def test_a_tournament_seated_by_rating_seats_its_rounds_best_rated_first(tmp_path):
    path = write_roster(tmp_path / "league.toml", entrants=12, rounds=2, table_size=4)
    path.write_text('seating = "rating"\n' + path.read_text())
    names = [e.name for e in load_roster(path).entrants]
    ordinals = {name.casefold(): float(i) for i, name in enumerate(names)}  # the last entrant rated best
    del ordinals[names[5].casefold()]  # unrated: a newcomer's 0, with the entrant rated 0
    with Store(tmp_path / "tournament.sqlite") as store:
        snap = store.begin(load_roster(path), 3)
        tables = snap.next_tables(ordinals)
        seated = [{snap.entrant(e).name for e in table} for table in tables]
        assert seated[0] == set(names[8:]) and seated[1] == set(names[4:8]) - {names[5]} | {names[3]}
        assert seated[2] == set(names[:3]) | {names[5]}
    plain = write_roster(tmp_path / "plain.toml", entrants=12, rounds=2, table_size=4)
    with Store(tmp_path / "plain" / "tournament.sqlite") as store:
        snap = store.begin(load_roster(plain), 3)
        assert snap.next_tables(ordinals) == snap.next_tables(None) != tables  # by standings: ratings not read
