"""Parsimonia: open-outcry auctions of resource and tourists cards against the clock."""

from ..manifest import Manifest
from .config import Config
from .deck import Deck
from .engine import Parsimonia

MANIFEST = Manifest(Parsimonia, currency="$")

__all__ = ["Config", "Deck", "MANIFEST", "Parsimonia"]
