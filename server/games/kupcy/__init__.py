"""Kupcy ("Merchants"): simultaneous sealed bids for goods, hidden ships, public warehouses, charters."""

from clients.games import KUPCY

from ..manifest import Manifest
from .cards import Deck
from .config import Config
from .engine import Kupcy

MANIFEST = Manifest(Kupcy, client=KUPCY)

__all__ = ["Config", "Deck", "MANIFEST", "Kupcy"]
