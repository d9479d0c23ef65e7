"""Tables spread over worker processes on one or more machines, with Redis between them.

``parsimonia serve --workers N --redis URL`` starts a supervisor (``supervisor``) that runs N workers, each an
ordinary server with its own data directory, listening on the shared port (``SO_REUSEPORT``) and on its own.
Beside its tables each worker runs a ``worker.Worker``: it keeps its entry in the directory in Redis fresh
(``directory``: where each worker is, its load and its tables, as keys that expire when it stops), and carries
out what other workers ask of it over pub/sub (``relay``: create a table here, an organiser's action on a table
held here, a bulletin for every worker). A table never leaves its worker: a request for a table held elsewhere is
answered with ``moved`` and that worker's address. Nothing a table does waits on Redis.
"""
