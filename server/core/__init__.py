"""The pure core: a table's match and its session, sans-IO (no trio, no sockets, no clock)."""
