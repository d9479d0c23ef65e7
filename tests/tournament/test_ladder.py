"""``parsimonia ladder``: the roster's bots in rated events, one after another in one data directory, each seated
by rating; stopped and started again, it carries on the event under way; a human in its roster is refused."""

from __future__ import annotations

import logging

import pytest
import trio

from server.ops import logs
from server.ratings.store import RATINGS_FILE, RatingStore
from server.tournament.director import DirectorConfig
from server.tournament.ladder import event_roster, next_event, run_ladder
from server.tournament.roster import RosterError, load_roster
from server.tournament.store import Store
from tests.tournament.test_director import write_roster


@pytest.fixture(autouse=True)
def _quiet_logs() -> None:
    logs.configure(level=logging.WARNING)


async def test_a_ladder_plays_rated_events_one_after_another(tmp_path):
    roster = write_roster(tmp_path / "bots.toml", entrants=4, rounds=1, table_size=2)
    data = tmp_path / "data"
    told: list[str] = []
    cfg = DirectorConfig(str(roster), str(data), port=0, time_scale=600)
    with trio.fail_after(240):
        assert await run_ladder(cfg, 2, told.append) == 2
    with RatingStore(data / RATINGS_FILE) as store:
        assert {r.entrant: r.games for r in store.ladder()} == {e.name: 2 for e in load_roster(roster).entrants}
    assert [line.splitlines()[0] for line in told if " over (" in line] == [
        "ladder event test league #1 over (2 games); the ladder:",
        "ladder event test league #2 over (2 games); the ladder:"]
    assert (data / "past" / "1-test_league__1" / "tournament.sqlite").is_file()
    with Store(data / "tournament.sqlite") as store:
        snap = store.load()
        assert snap.roster.name == "test league #2" and snap.roster.seating == "rating" and snap.state == "finished"
    assert next_event(str(data), load_roster(roster)) == 3


def test_a_ladder_started_again_carries_on_the_event_under_way(tmp_path):
    roster = load_roster(write_roster(tmp_path / "bots.toml", entrants=4, rounds=1, table_size=2))
    assert next_event(str(tmp_path), roster) == 1
    with Store(tmp_path / "tournament.sqlite") as store:
        store.begin(event_roster(roster, 7), 3)
    assert next_event(str(tmp_path), roster) == 7  # under way: carried on
    with Store(tmp_path / "tournament.sqlite") as store:
        store.set_state("finished")
    assert next_event(str(tmp_path), roster) == 8


async def test_a_ladder_seats_bots_only(tmp_path):
    roster = write_roster(tmp_path / "bots.toml", entrants=3, rounds=1, table_size=2)
    roster.write_text(roster.read_text() + '[[entrant]]\nname = "Ada"\nhuman = true\n')
    with pytest.raises(RosterError, match="a ladder seats bots only, and Ada is a human"):
        await run_ladder(DirectorConfig(str(roster), str(tmp_path / "data"), port=0), 1)
    assert not (tmp_path / "data").exists()
