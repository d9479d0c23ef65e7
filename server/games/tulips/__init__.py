"""Gift of Tulips: keep, give or add tulips against a moving festival ranking; the Secret Festival decides."""

from ..manifest import Manifest
from .config import Config
from .deck import Deck
from .engine import Tulips

MANIFEST = Manifest(Tulips)

__all__ = ["Config", "Deck", "MANIFEST", "Tulips"]
