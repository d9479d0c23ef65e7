"""Kupcy ("Merchants"): simultaneous sealed bids for goods, hidden ships, public warehouses, charters."""

from .cards import Deck
from .config import Config
from .engine import Kupcy

__all__ = ["Config", "Deck", "Kupcy"]
