"""The machines the games share: auctions, sealed choices, timers, keyed randomness."""
