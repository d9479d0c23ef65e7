"""Tournaments: a roster of humans and bots, seated round by round at tables of the server.

The pure core, with no sockets and no clock:

* ``roster``: the roster file (TOML) read and checked into ``Roster`` / ``Entrant``.
* ``pairing``: table sizes, Swiss rounds and round-robin pods, seat order.
* ``standings``: finishing places, tournament points and tie-breaks.
* ``seeds``: every table's seed, random or derived from the organiser's by a keyed hash.
* ``store``: the tournament in one SQLite file, so a stopped director resumes where it was.
* ``export``: standings and every game's result as JSON and CSV.
* ``presence``: who is connected to which seat, and when a held table may start.
* ``console``: the organiser's screen: standings, and every running seat with its presence and token.

Around it: ``director`` (the loop, on a server), ``link`` (its protocol side), ``bots`` (bot processes),
``commands`` (the organiser's).
"""
