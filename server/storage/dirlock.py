"""One process per data directory: an exclusive ``flock`` on the directory itself; ``DIR/lock`` holds the
holder's pid, for the message a second opener gets.

The lock is on the directory, not on the lock file, so deleting the file (or replacing it) does not let a
second server in. It lasts as long as its file descriptor: until ``close()``, or until the process ends
however it ends (``kill -9`` included), so a stale lock file never keeps anyone out. A second opener, in
this process or another, gets ``DataDirBusy`` at once.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable

LOCK_NAME = "lock"


class DataDirBusy(OSError):
    """Another process (or another opener in this one) holds the data directory."""


class DirLock:
    def __init__(self, root: str, held: Callable[[], object] | None = None) -> None:
        """``held``: called once the lock is held, before its pid is written (to set aside what is not ours)."""
        self.path = os.path.join(root, LOCK_NAME)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)  # not inherited by child processes
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = self._holder()
            by = f"process {holder}" if holder.isdigit() else "another process"
            raise DataDirBusy(f"data directory {root} is in use by {by}; stop it or use another --data (under make: DATA=...)") from None
        try:
            if held is not None:
                held()
            with open(self.path, "w", encoding="ascii") as f:
                f.write(f"{os.getpid()}\n")
        except OSError:
            os.close(fd)
            raise
        self._fd: int | None = fd

    def _holder(self) -> str:
        try:
            with open(self.path, encoding="ascii", errors="replace") as f:
                return f.read(32).strip()
        except OSError:
            return ""

    def close(self) -> None:
        """Let the next process in (the pid stays in the file; the lock is what counts)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
