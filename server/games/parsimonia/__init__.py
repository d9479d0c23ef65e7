"""Parsimonia: open-outcry auctions of resource and tourists cards against the clock."""

from .config import Config
from .deck import Deck
from .engine import Parsimonia

__all__ = ["Config", "Deck", "Parsimonia"]
