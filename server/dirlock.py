"""One process per data directory: an exclusive ``flock`` on ``DIR/lock``, which holds the holder's pid.

The lock lasts as long as its file descriptor: until ``close()``, or until the process ends however it ends
(``kill -9`` included), so a stale lock file never keeps anyone out. A second opener, in this process or
another, gets ``DataDirBusy`` at once.
"""

from __future__ import annotations

import fcntl
import os

LOCK_NAME = "lock"


class DataDirBusy(OSError):
    """Another process (or another opener in this one) holds the data directory."""


class DirLock:
    def __init__(self, root: str) -> None:
        self.path = os.path.join(root, LOCK_NAME)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)  # not inherited by child processes
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
            os.close(fd)
            by = f"process {holder}" if holder.isdigit() else "another process"
            raise DataDirBusy(f"data directory {root} is in use by {by}; stop it or use another --data") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd: int | None = fd

    def close(self) -> None:
        """Let the next process in (the pid stays in the file; the lock is what counts)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
