"""Each game's events and views in words, for people: a spectator's screen (``watch``), ``replay`` and a bot's
progress lines. A game's client half names its module (``clients.games``: ``words_for``); ``common`` holds what
they all share (clock readings, seat names)."""
