"""The process's open-file limit: raised to its hard limit at start, so that descriptors, not a low default
soft limit (1,024 on many systems), bound how many connections and journalled tables the server holds.

Each WebSocket or HTTP connection holds one descriptor, and so does each live table's journal when the
server keeps a data directory; ``RESERVED`` are kept for the listener, the event loop, logs and pipes."""

from __future__ import annotations

import resource

RESERVED = 64


def raise_open_files_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard one (when the system lets us) and return the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass  # e.g. an infinite hard limit the kernel caps lower: keep the soft one
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft


def capacity(soft: int) -> int:
    """Connections plus journalled tables that ``soft`` descriptors allow."""
    return max(0, soft - RESERVED)
