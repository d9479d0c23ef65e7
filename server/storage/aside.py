"""What in a data directory is not what the server expects there is set aside before anything is read.

Each of the server's own names must be what the server made it: ``log``, ``clock``, ``lock``, ``ids`` and their
half-written ``.new``/``.tmp`` a regular file, ``replays``, ``corrupt`` and ``tables`` a directory (a symbolic link to
one of these counts as it). Anything else under such a name (a directory where the log should be, a FIFO, which a
reader would wait on for ever, a dangling link, a device) is renamed ``NAME.aside-MS`` (MS: the wall clock's ms, so a
second one does not replace the first) with one line, and the server starts as if it were not there. Names the
server does not use are left alone, with one line each: they may be an operator's notes, or another tool's.
"""

from __future__ import annotations

import os
import re
import stat
import time
from typing import Any

FILES = frozenset({"log", "log.new", "clock", "clock.tmp", "lock", "ids", "ids.new"})
DIRECTORIES = frozenset({"replays", "corrupt", "tables"})
_ASIDE = re.compile(r"\.aside-\d+$")


def set_aside_strangers(root: str, log: Any) -> list[str]:
    """Rename aside every entry of ``root`` with one of our names that is not the kind we made; the new names."""
    moved = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name not in FILES and name not in DIRECTORIES:
            if not _ASIDE.search(name):
                log.warning("data_dir_entry_not_ours", entry=name, why="not a name the server uses: left alone")
            continue
        try:
            mode = os.stat(path).st_mode  # through a link: a link to the right kind is the right kind
        except OSError:
            mode = 0  # a dangling link, or a loop of links
        if (stat.S_ISREG(mode) and name in FILES) or (stat.S_ISDIR(mode) and name in DIRECTORIES):
            continue
        aside = f"{path}.aside-{time.time_ns() // 1_000_000}"
        os.rename(path, aside)
        moved.append(aside)
        log.error("data_dir_entry_set_aside", entry=name, moved_to=os.path.basename(aside),
                  why=f"not a {'directory' if name in DIRECTORIES else 'regular file'}")
    return moved
