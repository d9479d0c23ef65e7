"""bench/ratings_models.py runs, and each model it compares learns that greedy bots beat random ones."""

from __future__ import annotations

from bench.ratings_models import main


def test_every_model_is_measured_and_ranks_greedy_above_random():
    lines = main(["--games", "60"])
    assert lines[0].startswith("60 games;") and len(lines) == 4
    for line, name in zip(lines[1:], ("PlackettLuce", "BradleyTerryFull", "ThurstoneMostellerFull")):
        assert line.startswith(f"{name}: favourite among the winners ")
        apart = float(line.split("best random ordinal ")[1].split(",")[0])
        assert apart > 0, line
