"""Tournaments: a roster of humans and bots, seated round by round at tables of the server.

The pure core, with no sockets and no clock:

* ``roster``: the roster file (TOML) read and checked into ``Roster`` / ``Entrant``.
* ``pairing``: table sizes, Swiss rounds and round-robin pods, seat order (first-player rotation).
* ``standings``: finishing places, tournament points and tie-breaks from game results.
* ``store``: the tournament in one SQLite file, so a stopped director resumes where it was.
* ``export``: standings and every game's result as JSON and CSV.
"""
