"""Kupcy ("Merchants"): simultaneous sealed bids for goods, hidden ships, public warehouses, charters."""

from ..manifest import Manifest
from .cards import Deck
from .config import Config
from .engine import Kupcy

MANIFEST = Manifest(Kupcy)

__all__ = ["Config", "Deck", "MANIFEST", "Kupcy"]
