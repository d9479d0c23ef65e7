"""A data directory's entries that are not what the server made are set aside before anything is read
(server/storage/aside.py): one line each, and the server starts as if they were not there."""

from __future__ import annotations

import os

import pytest

from server.storage.datadir import DataDir
from tests.server.conftest import connect, create_table

STRANGERS = {
    "a directory for the log": ("log", os.mkdir),
    "a FIFO for the log": ("log", os.mkfifo),  # a reader would wait on it for ever
    "a dangling link for the log": ("log", lambda path: os.symlink(path + ".gone", path)),
    "a directory for the lock": ("lock", os.mkdir),
    "a FIFO for the ids": ("ids", os.mkfifo),
    "a file for the replays": ("replays", lambda path: open(path, "w").close()),
}


@pytest.mark.parametrize("case", STRANGERS)
def test_an_entry_of_the_wrong_kind_is_renamed_aside_in_one_line_and_the_directory_opens(tmp_path, captured_logs,
                                                                                          case):
    name, make = STRANGERS[case]
    make(str(tmp_path / name))
    data = DataDir(str(tmp_path))
    try:
        assert data.recover() == []
    finally:
        data.close()
    (aside,) = [p for p in os.listdir(tmp_path) if p.startswith(f"{name}.aside-")]
    assert os.path.lexists(tmp_path / aside)
    lines = [line for line in captured_logs.getvalue().splitlines() if "data_dir_entry" in line]
    assert len(lines) == 1 and "data_dir_entry_set_aside" in lines[0] and aside in lines[0]
    again = DataDir(str(tmp_path))  # what was set aside stays aside, and is not reported again
    again.close()
    assert len([line for line in captured_logs.getvalue().splitlines() if "data_dir_entry" in line]) == 1


def test_a_name_the_server_does_not_use_is_left_alone_with_one_line(tmp_path, captured_logs):
    (tmp_path / "notes.txt").write_text("the organiser's\n")
    DataDir(str(tmp_path)).close()
    assert (tmp_path / "notes.txt").read_text() == "the organiser's\n"
    lines = [line for line in captured_logs.getvalue().splitlines() if "data_dir_entry" in line]
    assert len(lines) == 1 and "data_dir_entry_not_ours" in lines[0] and "notes.txt" in lines[0]


async def test_a_server_on_a_directory_with_a_fifo_for_its_log_starts_and_plays(start_server, tmp_path,
                                                                                 autojump_clock):
    os.mkfifo(tmp_path / "log")  # before, the start hung without listening
    server = await start_server(data_dir=str(tmp_path))
    async with connect(server, "a") as a:
        assert await create_table(a, 2)
    assert os.path.isfile(tmp_path / "log")
