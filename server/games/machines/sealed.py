"""The sealed choice: a machine engines embed, beside ``auction.py``.

A set of seats each owes one hidden choice by a deadline. Until the reveal nobody, spectators included, learns
more than who chose. When every seat has chosen, or at the deadline, the seats that have not chosen get
their default, and all is revealed at once.

What a choice is (a card offered, a split of a hand, a bid) is the game's business: the machine holds them and
says when all are in. The game sets the deadline as a timer (``key`` in its ``Timers``), emits
the events (``chosen_event``: the sealed form) and decides what the revealed choices do; a tie re-bid is a new
``SealedChoice`` among the tied seats. The machine reads the deadline from the timers, so a pause moves its view;
at the reveal (``close``) the timer is cancelled and the deadline kept as it stood.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, Callable, Hashable, TypedDict, cast

from protocol.values import EventData, Snapshot, Value

from server.games.base import IllegalAction
from server.games.machines.timers import Timers


class SealedView(TypedDict):
    """The public part of a sealed choice: who owes one, who has chosen, when it falls due."""

    seats: list[int]
    chosen: list[int]
    deadline: int | None


def sealed_value(view: SealedView) -> Mapping[str, Value]:
    """``view`` as a ``Value``: every field of ``SealedView`` is one (mypy sees a TypedDict as a map of object)."""
    return cast("Mapping[str, Value]", view)


@dataclass
class SealedChoice:
    key: Hashable  # the deadline's timer key in the game
    seats: frozenset[int]  # the seats that owe a choice
    timers: Timers = field(repr=False, compare=False)  # the game's, which hold the deadline
    choices: dict[int, Any] = field(default_factory=dict)
    defaulted: frozenset[int] = frozenset()  # seats whose choice was made for them
    _closed_at: int | None = field(default=None, repr=False)  # the deadline as it stood at the reveal

    @property
    def deadline(self) -> int | None:
        """When the choice falls due: the timer while it runs, the kept deadline after the reveal."""
        return self.timers.get(self.key) if self._closed_at is None else self._closed_at

    def owes(self, seat: int) -> bool:
        return seat in self.seats and seat not in self.choices

    def check(self, seat: int) -> None:
        """Refuse a choice from ``seat`` now (``IllegalAction``): it owes none, or has made it."""
        if seat not in self.seats:
            raise IllegalAction("no_choice_owed", "you owe no choice here")
        if seat in self.choices:
            raise IllegalAction("already_chosen", "you have made your choice; it stays sealed until the reveal")

    def choose(self, seat: int, value: Any) -> None:
        self.check(seat)
        self.choices[seat] = value

    @property
    def pending(self) -> list[int]:
        return sorted(self.seats - set(self.choices))

    @property
    def complete(self) -> bool:
        return len(self.choices) == len(self.seats)

    def fill_defaults(self, default: Callable[[int], Any]) -> None:
        """At the deadline: every seat that has not chosen gets ``default(seat)``."""
        missing = self.pending
        for seat in missing:
            self.choices[seat] = default(seat)
        self.defaulted = frozenset(missing)

    def close(self, now_ms: int) -> dict[int, Any]:
        """The reveal, at ``now_ms``, once every seat has chosen: every choice by seat. The timer is cancelled
        and the deadline kept as it stood (a timer already gone fell due now, which is why defaults were filled)."""
        if not self.complete:
            raise ValueError("a sealed choice is revealed only once every seat has chosen")
        due = self.timers.get(self.key)
        self._closed_at = now_ms if due is None else due
        self.timers.cancel(self.key)
        return dict(sorted(self.choices.items()))

    def chosen_event(self, seat: int) -> tuple[EventData, frozenset[int], EventData]:
        """``(data, audience, redacted)`` of the event for ``seat``'s choice: its value for itself alone."""
        return {"seat": seat, "choice": self.choices[seat]}, frozenset({seat}), {"seat": seat}

    def to_view(self) -> SealedView:
        """The public part: who owes, who has chosen, the deadline; never a value before the reveal."""
        return {"seats": sorted(self.seats), "chosen": sorted(self.choices), "deadline": self.deadline}

    def private_view(self, seat: int) -> Any:
        """What ``seat`` chose (None before it chose)."""
        return self.choices.get(seat)

    def snapshot(self) -> Snapshot:
        return {"key": repr(self.key), "seats": sorted(self.seats), "deadline": self.deadline,
                "choices": sorted(self.choices.items()), "defaulted": sorted(self.defaulted)}
