"""The roster file: read into dataclasses, every mistake named with its line and field."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from server.tournament.roster import DEFAULT_POINTS, Entrant, RosterError, load_roster, parse_roster

EXAMPLE = Path(__file__).parents[2] / "examples" / "league.toml"

GOOD = """\
name = "Autumn league"
format = "round_robin"
rounds = 2
table_size = 3

[options]
game_ms = 1200000

[[entrant]]
name = "Ada"
human = true

[[entrant]]
name = "greedy-1"
bot = ["parsimonia", "bot", "greedy", "--url", "{url}", "--table", "{table}", "--token", "{token}"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roster.toml"
    path.write_text(text)
    return path


def error(tmp_path: Path, text: str) -> str:
    with pytest.raises(RosterError) as info:
        load_roster(write(tmp_path, text))
    return str(info.value)


def test_a_good_roster_reads_into_dataclasses_with_defaults(tmp_path):
    roster = load_roster(write(tmp_path, GOOD))
    assert (roster.name, roster.format, roster.rounds, roster.table_size) == ("Autumn league", "round_robin", 2, 3)
    assert (roster.game, roster.seed, roster.points) == ("parsimonia", None, DEFAULT_POINTS)
    assert roster.options == {"game_ms": 1200000, "quiet_floor_ms": 5000, "grace_ms": 250}  # Ada is a person
    assert roster.human_grace_s == 300
    assert [(e.name, e.kind) for e in roster.entrants] == [("Ada", "human"), ("greedy-1", "bot")]


def test_a_preset_sets_the_clocks_and_options_override_them(tmp_path):
    roster = load_roster(write(tmp_path, GOOD.replace("[options]", 'preset = "quick"\n\n[options]')))
    assert roster.options == {"game_ms": 1200000, "opening_ms": 180000, "turn_ms": 60000, "quiet_ms": 8000,
                              "quiet_floor_ms": 5000, "grace_ms": 250}  # grace_ms: the preset's and the human's
    roster = load_roster(write(tmp_path, GOOD.replace("[options]", 'preset = "evening"\n\n[options]')))
    assert roster.options["game_ms"] == 1200000 and roster.options["quiet_ms"] == 15000  # [options] win
    assert ":6: preset: must be one of 'quick', 'evening', 'full', not 'blitz'" in error(
        tmp_path, GOOD.replace("[options]", 'preset = "blitz"\n\n[options]'))
    kupcy = GOOD.replace("[options]\ngame_ms = 1200000\n", 'game = "kupcy"\npreset = "quick"\n')
    assert "preset: the presets are Parsimonia's clocks, not kupcy's" in error(tmp_path, kupcy)


def test_the_example_league_is_twelve_bots_in_a_three_round_swiss():
    roster = load_roster(EXAMPLE)
    assert (roster.format, roster.rounds, roster.table_size) == ("swiss", 3, 4)
    assert len(roster.entrants) == 12 and all(e.kind == "bot" for e in roster.entrants)
    assert not {"quiet_floor_ms", "grace_ms"} & set(roster.options)  # bots alone: every clock shrinks, no grace
    assert {e.bot[2] for e in roster.entrants if e.bot} == {"greedy", "random"}
    assert all({"{url}", "{table}", "{token}"} <= set(e.bot or ()) for e in roster.entrants)


def test_a_bot_command_gets_its_placeholders_filled_and_the_same_values_in_its_environment():
    bot = Entrant("b1", ("run", "--url={url}", "{table}", "{token}", "{name}", "{game}", "{literal"))
    assert bot.argv("ws://h:1", "t7", "secret", "kupcy") == [
        "run", "--url=ws://h:1", "t7", "secret", "b1", "kupcy", "{literal"]
    assert bot.env("ws://h:1", "t7", "secret", "kupcy") == {
        "PARSIMONIA_URL": "ws://h:1", "PARSIMONIA_TABLE": "t7", "PARSIMONIA_TOKEN": "secret", "PARSIMONIA_NAME": "b1",
        "PARSIMONIA_GAME": "kupcy"}


def test_a_token_beginning_with_a_dash_is_passed_joined_to_its_option_so_it_is_not_read_as_one():
    bot = Entrant("b1", ("run", "--table", "{table}", "--token", "{token}", "-v", "{name}", "--game", "x{game}"))
    assert bot.argv("ws://h:1", "t7", "-abc", "parsimonia") == [
        "run", "--table=t7", "--token=-abc", "-v", "b1", "--game", "xparsimonia"]
    parser = argparse.ArgumentParser()
    parser.add_argument("--token")
    assert parser.parse_args([bot.argv("u", "t", "-abc", "g")[2]]).token == "-abc"


def test_a_value_that_looks_like_an_option_does_not_join_the_next_argument():
    bot = Entrant("b1", ("run", "{token}", "{name}"))
    assert bot.argv("u", "t", "--abc", "g") == ["run", "--abc", "b1"]


def test_to_dict_reads_back_to_the_same_roster(tmp_path):
    roster = load_roster(write(tmp_path, GOOD))
    assert parse_roster(roster.to_dict()) == roster


def test_a_roster_seed_and_grace_are_kept_and_read_back(tmp_path):
    roster = load_roster(write(tmp_path, "seed = -7\nhuman_grace_s = 0\n" + GOOD))
    assert (roster.seed, roster.human_grace_s) == (-7, 0) and parse_roster(roster.to_dict()) == roster
    assert "seed" not in load_roster(write(tmp_path, GOOD)).to_dict()  # TOML has no null: no seed, no key


def test_points_shorter_than_a_table_are_padded_with_zeros(tmp_path):
    roster = load_roster(write(tmp_path, GOOD + "\n[points]\nby_place = [3, 1]\n"))
    assert roster.points == (3, 1, 0, 0, 0, 0)


def test_invalid_toml_names_the_file_and_line(tmp_path):
    message = error(tmp_path, 'name = "x"\nrounds = \n')
    assert "roster.toml" in message and "line 2" in message


def test_a_missing_file_is_a_roster_error(tmp_path):
    with pytest.raises(RosterError, match="cannot read"):
        load_roster(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (('rounds = 2', 'rounds = 0'), ":3: rounds: must be 1..100, not 0"),
        (('rounds = 2', 'rounds = "two"'), ":3: rounds: must be an integer"),
        (('rounds = 2\n', ''), "rounds: missing"),
        (('table_size = 3', 'table_size = 7'), ":4: table_size: must be 2..6, not 7"),
        (('format = "round_robin"', 'format = "knockout"'), ":2: format: must be one of"),
        (('game_ms = 1200000', 'game_ms = "long"'), ":7: options.game_ms: expected an integer, got str"),
        (('game_ms = 1200000', 'coffee_ms = 5'), ":7: options.coffee_ms: unknown field"),
        (('human = true', 'human = true\nbot = ["x"]'), ":9: entrant #1 (Ada): must be exactly one of"),
        (('human = true', 'human = false'), ":9: entrant #1 (Ada): must be exactly one of"),
        (('human = true', 'humna = true'), ":11: entrant #1 (Ada).humna: unknown field"),
        (('name = "greedy-1"', 'name = "ADA"'), ":14: entrant #2.name: 'ADA' is already the name of entrant #1"),
        (('"{token}"]', '"{seat}"]'), ":15: entrant #2 (greedy-1).bot: unknown placeholder {seat}"),
        (('bot = ["parsimonia"', 'bot = ["", "parsimonia"'), ":15: entrant #2 (greedy-1).bot: must be a command"),
        (('name = "Ada"\n', ''), ":9: entrant #1.name: missing"),
        (('name = "Autumn league"', 'nmae = "x"'), ":1: nmae: unknown field"),
        (('rounds = 2', 'rounds = 2\nhuman_grace_s = -1'), ":4: human_grace_s: must be 0..86400, not -1"),
    ],
)
def test_a_mistake_is_reported_with_its_line_and_field(tmp_path, change, expected):
    old, new = change
    assert old in GOOD
    assert expected in error(tmp_path, GOOD.replace(old, new, 1))


def test_points_must_not_rise_from_one_place_to_the_next(tmp_path):
    message = error(tmp_path, GOOD + "\n[points]\nby_place = [3, 4]\n")
    assert "points.by_place" in message and "must not score more" in message and ":18:" in message


def test_a_single_entrant_is_not_a_tournament(tmp_path):
    one = GOOD[:GOOD.index("[[entrant]]\nname = \"greedy-1\"")]
    assert ":9: entrant: 2..1000 entrants, not 1" in error(tmp_path, one)


def test_entrants_written_as_one_table_instead_of_blocks_are_pointed_out(tmp_path):
    assert "entrant: must be [[entrant]] blocks" in error(tmp_path, 'name = "x"\nrounds = 1\n[entrant]\nname = "a"\n')


def test_an_unknown_game_is_named_with_the_known_ones(tmp_path):
    assert "unknown game 'chess' (known: gift-of-tulips, kupcy, parsimonia)" in error(tmp_path, 'game = "chess"\n' + GOOD)
