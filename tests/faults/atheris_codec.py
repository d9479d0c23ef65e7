"""Coverage-guided fuzzing (atheris, libFuzzer) of everything that reads a client's bytes:
``protocol.codec.decode``, ``protocol.messages.parse_client`` and ``request_id`` (and the typed decoder the server
uses, ``decode_client``, which must answer as they do), every game's command
catalogue (``parse_command``) and table options (``check_options``), and an ``act``'s command applied by
every seat to a copy of each game's engine just started.

The target's contract: whatever the bytes, each step returns or raises its own refusal (``ProtocolError``,
``SchemaError``, ``IllegalAction``, ``ValueError`` for options), and the typed decoder gives the same message or
the same refusal; anything else is a crash, and libFuzzer
stops and keeps the input. The corpus starts from messages of every client type (``tests.faults.hostile``), written to a
temporary directory unless one is given.

    python tests/faults/atheris_codec.py -runs=200000          # what make faults runs
    python tests/faults/atheris_codec.py -max_total_time=60 corpus/

libFuzzer's last line gives the coverage reached: ``cov`` (code edges of the instrumented Python modules:
protocol.* and the games' catalogues and options; msgpack's unpacker is C and is not counted) and ``ft``
(features). Needs ``pip install -e '.[faults]'``.
"""

from __future__ import annotations

import copy
import os
import sys
import tempfile

import atheris

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

with atheris.instrument_imports(include=["protocol", "server.games"]):
    from protocol.codec import Limits, decode
    from protocol.errors import ProtocolError
    from protocol.messages import decode_client, parse_client, parse_message, request_id
    from protocol.schema import SchemaError
    from server.games import GAMES, IllegalAction, discover, new_game
    from server.games.base import parse_command

    discover()  # the engines are imported here, instrumented

SEEDS = 400
PLAYERS = 3
STARTED = {name: new_game(name, PLAYERS, seed=1) for name in GAMES}  # each engine at its start


def typed(data: bytes) -> tuple[object, ...]:
    """What the server's typed decoder answers: the message, or its refusal."""
    try:
        return ("accepted", decode_client(data, Limits()))
    except ProtocolError as err:
        return (err.code, err.message, err.re)


def one_input(data: bytes) -> None:
    answer = typed(data)
    try:
        message = decode(data)
    except ProtocolError as err:
        assert answer == (err.code, err.message, None), answer
        return
    re = request_id(message)
    try:
        parsed = parse_client(message)
    except ProtocolError as err:
        assert answer == (err.code, err.message, re), answer
        return
    assert answer == ("accepted", parse_message(message)), answer
    if parsed["type"] == "act":
        for name, cls in GAMES.items():
            try:
                parse_command(cls.COMMANDS, parsed["command"])
            except SchemaError:
                continue
            engine = copy.deepcopy(STARTED[name])
            for seat in range(PLAYERS):
                try:
                    engine.apply(seat, parsed["command"], 1000)
                except (IllegalAction, SchemaError):
                    pass
    elif parsed["type"] == "create" and parsed["game"] in GAMES:
        try:
            GAMES[parsed["game"]].check_options(parsed.get("options"), parsed.get("time_scale", 1.0))
        except ValueError:
            pass


def seed_corpus() -> str:
    from tests.faults.hostile import Hostile, Known

    hostile = Hostile(1, Known(tables={"t1": "parsimonia", "t2": "kupcy", "t3": "gift-of-tulips"}))
    folder = tempfile.mkdtemp(prefix="parsimonia-atheris-")
    for n in range(SEEDS):
        frame = hostile._command() if n % 2 else hostile._message()
        with open(os.path.join(folder, f"seed{n}"), "wb") as f:
            f.write(frame)
    return folder


def main() -> None:
    args = list(sys.argv)
    if not [a for a in args[1:] if not a.startswith("-")]:
        args.append(seed_corpus())
    atheris.Setup(args, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
