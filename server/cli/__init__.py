"""The ``parsimonia`` command."""
