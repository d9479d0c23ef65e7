"""The ``parsimonia`` command, run in process."""

from __future__ import annotations

import errno
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.cli import examples
from server.cli.main import main
from tests.server.cli.test_errors import ROOT, TIMEOUT_S, Cli, _sigint_by_default, tables, wait_for

JSON_KEYS = {"game", "seed", "players", "winners", "dollars", "company_dollars", "actions", "game_ms"}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    code = info.value.code
    return (0 if code is None else code), out, err


def test_simulate_json_prints_one_object_with_the_result(capsys):
    code, out, err = run(capsys, "simulate", "--players", "3", "--seed", "7", "--time-scale", "20", "--json")
    assert code == 0 and err == ""
    assert out.endswith("\n") and out.count("\n") == 1
    doc = json.loads(out)
    assert JSON_KEYS <= set(doc)
    assert doc["game"] == "parsimonia" and doc["seed"] == 7 and doc["players"] == 3
    assert len(doc["dollars"]) == 3
    assert sum(doc["dollars"]) + doc["company_dollars"] == 7_760
    assert doc["winners"] and all(doc["dollars"][w] == max(doc["dollars"]) for w in doc["winners"])
    assert doc["actions"] > 0 and doc["game_ms"] == 120 * 60_000 // 20


def test_simulate_json_is_byte_identical_twice(capsys):
    argv = ("simulate", "--players", "4", "--seed", "3", "--players-kind", "mix", "--time-scale", "10", "--json")
    first = run(capsys, *argv)
    second = run(capsys, *argv)
    assert first == second
    assert first[1]


def test_simulate_json_differs_by_seed(capsys):
    a = json.loads(run(capsys, "simulate", "--seed", "1", "--time-scale", "20", "--json")[1])
    b = json.loads(run(capsys, "simulate", "--seed", "2", "--time-scale", "20", "--json")[1])
    assert a["seed"] == 1 and b["seed"] == 2
    assert (a["dollars"], a["actions"]) != (b["dollars"], b["actions"])


def test_defaults_are_four_greedy_players_seed_one(capsys):
    doc = json.loads(run(capsys, "simulate", "--time-scale", "30", "--json")[1])
    assert doc["players"] == 4 and doc["seed"] == 1
    assert doc.get("kinds", ["greedy"] * 4) == ["greedy"] * 4


def test_simulate_without_json_prints_a_readable_summary(capsys):
    code, out, err = run(capsys, "simulate", "--players", "2", "--seed", "5", "--players-kind", "mix",
                         "--time-scale", "20")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("Parsimonia, 2 players (greedy, random), seed 5, ") and lines[0].endswith(" actions")
    assert lines[1].startswith("game over (clock) after 6:00, ")
    assert lines[2].startswith("  seat 0 (greedy): $") and lines[3].startswith("  seat 1 (random): $")
    assert lines[-1].startswith("  the Company: $")
    assert sum("winner" in line for line in lines) >= 1
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


@pytest.mark.parametrize("players", ["1", "7", "0"])
def test_a_bad_player_count_exits_2_with_a_message(capsys, players):
    code, out, err = run(capsys, "simulate", "--players", players, "--json")
    assert code == 2
    assert out == ""
    assert "parsimonia simulate:" in err and "2 to 6 players" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--players", "four"],
        ["simulate", "--players-kind", "clever"],
        ["simulate", "--bogus"],
        ["dance"],
        [],
    ],
)
def test_bad_arguments_exit_2_with_usage(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert "usage: parsimonia" in err


@pytest.mark.parametrize("scale", ["0", "-5", "inf", "nan"])
def test_a_bad_time_scale_exits_2_with_a_message(capsys, scale):
    code, out, err = run(capsys, "simulate", "--time-scale", scale, "--json")
    assert code == 2
    assert "time_scale" in err


def test_a_missing_deck_file_exits_2_with_a_message(capsys, tmp_path):
    code, out, err = run(capsys, "simulate", "--option", f"deck=@{tmp_path / 'nope.json'}", "--json")
    assert code == 2 and out == ""
    assert err.startswith("parsimonia simulate:") and "nope.json" in err


@pytest.mark.parametrize("text", ["{bad json", '{"resources": [], "tourists": []}'])
def test_a_malformed_deck_file_exits_2_with_a_message(capsys, tmp_path, text):
    path = tmp_path / "deck.json"
    path.write_text(text)
    code, out, err = run(capsys, "simulate", "--option", f"deck=@{path}", "--json")
    assert code == 2 and out == ""
    assert err.startswith("parsimonia simulate:") and "deck" in err and err.count("\n") == 1


def test_a_deck_file_is_played(capsys, tmp_path):
    path = tmp_path / "deck.json"
    cards = [{"type": 1, "profit": 10}, {"type": 2, "profit": 20}]
    path.write_text(json.dumps({"resources": cards, "tourists": cards}))
    code, out, _ = run(capsys, "simulate", "--players", "2", "--option", f"deck=@{path}", "--time-scale", "20",
                       "--json")
    assert code == 0
    default = json.loads(run(capsys, "simulate", "--players", "2", "--time-scale", "20", "--json")[1])
    played = json.loads(out)
    assert JSON_KEYS <= set(played)
    assert played != default  # another deck, another game


def test_every_option_says_what_it_does_and_its_default(capsys):
    from server.cli.main import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # noqa: SLF001 (argparse keeps them there)
    for name, command in commands.items():
        for action in command._actions:  # noqa: SLF001
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings[0]} has no help"
    code, out, _ = run(capsys, "serve", "--help")
    out = " ".join(out.split())
    assert code == 0
    assert "(default: 8765)" in out and "(default: data)" in out and "(default: fsync)" in out


def test_version_and_a_description_without_markup(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("parsimonia ")
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "``" not in out and "`" not in out


HELLO = """
def register(command):
    command("hello", "greet whoever runs it", run, ["parsimonia hello   # hello"])


def run(args):
    print("hello")
    return 0


def taken(command):
    command("serve", "a second serve", run)
"""


def test_commands_of_other_packages_are_found_by_their_entry_points_and_a_broken_one_is_said(tmp_path):
    """``parsimonia bench`` is one (pyproject.toml): the product never imports ``bench``."""
    from server.cli.main import build_parser

    assert "bench" in build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001
    (tmp_path / "hello_cmd.py").write_text(HELLO)
    info = tmp_path / "hello-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hello\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[parsimonia.commands]\nhello = hello_cmd:register\n"
                                           "broken = hello_cmd:NOTHING\ntaken = hello_cmd:taken\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    run = subprocess.run([sys.executable, "-c", "from server.cli.main import main; main()", "hello"], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=TIMEOUT_S)
    assert run.returncode == 0 and run.stdout == "hello\n", run.stderr
    assert sorted(run.stderr.splitlines()) == [
        "parsimonia hello: command entry point 'broken' skipped: module 'hello_cmd' has no attribute 'NOTHING'",
        "parsimonia hello: command entry point hello_cmd.taken failed: argument COMMAND: conflicting subparser: serve"]


def fake_run_bot(calls):
    async def run_bot(url, player, **options):
        calls.append((url, options))
        return {"game": "parsimonia", "reason": "clock", "winners": [1], "dollars": [900, 1100],
                "company_dollars": 5760, "turns": 12, "game_ms": 60_000}

    return run_bot


def test_bot_time_scale_goes_to_the_table_it_creates_and_the_result_reads_well(capsys, monkeypatch):
    calls: list = []
    monkeypatch.setattr("clients.sdk.run_bot", fake_run_bot(calls))
    code, out, _ = run(capsys, "bot", "greedy", "--time-scale", "120", "--url", "ws://127.0.0.1:9")
    assert code == 0
    [(called_url, options)] = calls
    assert re.fullmatch(r"greedy-bot-[0-9a-f]{4}", options.pop("name"))  # two bots started alike differ
    assert options.pop("say") is print  # waiting, reconnecting, refusals: lines beside the narration
    assert (called_url, options) == ("ws://127.0.0.1:9", {"table": None, "seats": None, "token": None,
                                                         "game": "parsimonia", "create_options": {"time_scale": 120.0}})
    assert out.splitlines() == ["game over (clock) after 1:00, 12 turns", "  seat 0: $900", "  seat 1: $1100  winner",
                                "  the Company: $5760"]
    code, out, _ = run(capsys, "bot", "greedy", "--json")
    assert json.loads(out)["dollars"] == [900, 1100]
    assert calls[-1][1]["create_options"] == {}


def test_bot_preset_and_options_go_to_the_table_it_creates(capsys, monkeypatch):
    calls: list = []
    monkeypatch.setattr("clients.sdk.run_bot", fake_run_bot(calls))
    code, _, _ = run(capsys, "bot", "greedy", "--preset", "quick", "--option", "quiet_ms=9000", "--time-scale", "2")
    assert code == 0
    assert calls[-1][1]["create_options"] == {"time_scale": 2.0, "options": {
        "game_ms": 1_200_000, "opening_ms": 180_000, "turn_ms": 60_000, "quiet_ms": 9000, "quiet_floor_ms": 5000,
        "grace_ms": 250}}
    code, _, _ = run(capsys, "bot", "greedy", "--option", "turn_ms=60000")
    assert code == 0 and calls[-1][1]["create_options"] == {"options": {"turn_ms": 60000}}
    code, out, err = run(capsys, "bot", "greedy", "--game", "kupcy", "--preset", "quick")
    assert code == 2 and len(calls) == 2
    assert err.count("\n") == 1 and "--preset is for parsimonia" in err


def test_the_banner_gives_the_pages_http_address_beside_the_websocket_one():
    from server.cli.serve import banner

    lines = banner("0.0.0.0", 9000).splitlines()
    assert lines[0].startswith("Parsimonia server on ws://127.0.0.1:9000 ")
    assert "http://127.0.0.1:9000/" in lines[1]


def test_the_banner_of_a_server_without_an_admin_token_says_how_to_give_it_one():
    from server.cli.serve import banner

    assert "#admin for the organiser" in banner("127.0.0.1", 9000, admin=True)
    without = banner("127.0.0.1", 9000, admin=False)
    assert "#admin for the organiser" not in without and "--admin-token-file" in without


@pytest.mark.parametrize("command", ["serve", "tournament"])
@pytest.mark.parametrize("content", ["", "   \n", "\n\ntoken-on-the-third-line-0123456789\n"])
def test_an_empty_or_blank_admin_token_file_is_refused_in_one_line(capsys, tmp_path, command, content):
    token_file = tmp_path / "admin-token"
    token_file.write_text(content)
    argv = ["serve", "--port", "0", "--sync", "off"] if command == "serve" else \
        ["tournament", "--roster", str(tmp_path / "r.toml")]
    status, out, err = run(capsys, *argv, "--admin-token-file", str(token_file))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "admin token file is empty or blank" in err


# ---------------------------------------------------------------- every --help's examples, run as written


def help_examples(command: str) -> list[str]:
    """The example command lines ``parsimonia [COMMAND] --help`` ends with, their ``# ...`` notes left out."""
    shown = subprocess.run([sys.executable, "-m", "server.cli.main", *([command] if command else []), "--help"],
                           cwd=ROOT, text=True, capture_output=True, timeout=TIMEOUT_S, check=True).stdout
    head, _, tail = shown.partition(f"\n{examples.HEAD}\n")
    lines = [line.strip() for line in tail.splitlines()]
    assert head and lines and all(line.startswith("parsimonia ") for line in lines), shown
    return [line.split(" #", 1)[0].strip() for line in lines]


class Examples:
    """Runs example lines in a shell in a fresh directory standing for a fresh clone (its ``examples/`` linked in),
    with the venv's ``bin`` first on PATH, as an activated venv has it, and ``PARSIMONIA_URL`` naming the test's
    server when there is one (on 127.0.0.1, port 0). Two things are changed in a line, for the test only: the
    default ws://127.0.0.1:8765 becomes that server's URL, and a command that listens (``serve``, ``tournament``)
    gets ``--port 0``: a test never depends on a fixed port being free (a ``make run`` beside ``make test``)."""

    def __init__(self, tmp_path: Path) -> None:
        self.cwd = tmp_path
        (tmp_path / "examples").symlink_to(ROOT / "examples")
        environ = {k: v for k, v in os.environ.items() if not k.startswith("PARSIMONIA_")}
        self.env = {**environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{environ.get('PATH', '')}",
                    "PYTHONPATH": str(ROOT)}
        self.url: str | None = None
        self.server: Cli | None = None
        self.background: list[tuple[str, subprocess.Popen[str]]] = []

    def serve(self) -> None:
        """A server as a user starts one, its data in ./data (the default), on a free port."""
        self.server = Cli("serve", "--port", "0", "--log-level", "warning", cwd=self.cwd)
        port = re.search(r"ws://127\.0\.0\.1:(\d+)", self.server.line())
        assert port
        self.url = f"ws://127.0.0.1:{port.group(1)}"
        self.env["PARSIMONIA_URL"] = self.url

    def adapt(self, line: str) -> str:
        if self.url is not None:
            line = line.replace("ws://127.0.0.1:8765", self.url)
        line = re.sub(r"--port [1-9]\d*", "--port 0", line)
        return re.sub(r"^(parsimonia (?:serve|tournament))(?!.* --port )", r"\1 --port 0", line)

    def start(self, line: str) -> subprocess.Popen[str]:
        return subprocess.Popen(["bash", "-c", self.adapt(line)], cwd=self.cwd, env=self.env, text=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=_sigint_by_default)

    def seated(self) -> int:
        return sum(t["taken"] for t in tables(self.url)) if self.url else 0

    def run(self, lines: list[str], *, wait: bool = True) -> None:
        """Each line to its end, in order; one ending in ``&`` in the background (the next starts once it has taken
        its seat, as a person's typing would wait for it), all of those awaited at the end unless not ``wait``."""
        for line in lines:
            if line.endswith("&"):
                before = self.seated()
                self.background.append((line, self.start(line[:-1])))
                if self.url:
                    wait_for(lambda: self.seated() > before)
                continue
            proc = self.start(line)
            out, err = proc.communicate(timeout=WHOLE_S)
            assert proc.returncode == 0 and "Traceback" not in err, f"{line}\n{out}\n{err}"
            assert out.strip(), f"{line}: printed nothing"
        if wait:
            self.wait()

    def wait(self) -> None:
        while self.background:
            line, proc = self.background.pop(0)
            out, err = proc.communicate(timeout=WHOLE_S)
            assert proc.returncode == 0 and "Traceback" not in err, f"{line}\n{out}\n{err}"

    def stop(self) -> None:
        for _, proc in self.background:
            proc.kill()
            proc.communicate()
        if self.server is not None:
            self.server.stop()


WHOLE_S = 180  # for one example line: the longest, the duel tournament, takes about 15 s on an idle machine
NEEDS_A_SERVER = {"bot", "demo", "watch", "tables", "replay"}


@pytest.fixture
def example_runner(tmp_path: Path) -> Iterator[Examples]:
    runner = Examples(tmp_path)
    yield runner
    runner.stop()


@pytest.fixture
def default_port_held() -> Iterator[None]:
    """127.0.0.1:8765 listened on for the test's length, as a ``make run`` beside the suite would (or already is)."""
    with socket.socket() as held:
        try:
            held.bind(("127.0.0.1", 8765))
            held.listen()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
        yield


@pytest.mark.parametrize("command", ["", "simulate", "serve", "bot", "demo", "watch", "tables", "replay", "tournament",
                                     "ratings", "ladder", "bench"])
def test_every_example_a_commands_help_ends_with_runs_as_written(example_runner, default_port_held, command):
    lines = help_examples(command)
    if command == "serve":  # each runs until Ctrl-C: it must say where it listens first
        for line in lines:
            proc = example_runner.start(line)
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], TIMEOUT_S)
            banner = proc.stdout.readline() if ready else ""
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=TIMEOUT_S)
            assert banner.startswith("Parsimonia server on ws://") and proc.returncode == 0, f"{line}\n{banner}{err}"
        return
    if command in NEEDS_A_SERVER:
        example_runner.serve()
    if command == "watch":  # a game at t1 to watch: the bot examples', played meanwhile
        example_runner.run([line if line.endswith("&") else line + " &" for line in help_examples("bot")], wait=False)
    if command == "replay":  # a game finished at t1 first: the bot examples' again
        example_runner.run(help_examples("bot"))
        wait_for(lambda: (example_runner.cwd / "data" / "replays" / "t1.journal").exists())
    example_runner.run(lines)
