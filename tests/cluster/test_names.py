"""Table ids that tell their worker."""

from server.cluster import names


def test_a_workers_table_ids_name_it_and_no_other_id_does() -> None:
    assert names.worker_of(names.table_prefix(7) + "t12") == 7
    for other in ("t12", "w-t1", "w7t1", "w7-", "w7-tx", "w1234567-t1", " w7-t1", "w7-t1 ", "w7-t1\n", "w07-t1",
                  "w0-t1", "w7-t01", "w\u0662-t1", "w7-t\u0661", "w\uff17-t1"):  # ASCII digits only, the id whole
        assert names.worker_of(other) is None


def test_a_workers_connection_ids_name_it_and_stay_apart_from_every_other_workers() -> None:
    first = names.first_connection_id(3)
    assert names.worker_of_connection(first) == 3
    assert names.worker_of_connection(first + names.CONNECTIONS_APART - 2) == 3
    assert names.worker_of_connection(names.first_connection_id(4)) == 4
    assert names.worker_of_connection(17) == 0  # a lone server's ids: no worker's
    assert names.first_connection_id(999_999) + names.CONNECTIONS_APART < 2**62  # within the protocol's conn field
