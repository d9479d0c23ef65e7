"""Table ids that tell their worker."""

from server.cluster import names


def test_a_workers_table_ids_name_it_and_no_other_id_does() -> None:
    assert names.worker_of(names.table_prefix(7) + "t12") == 7
    for other in ("t12", "w-t1", "w7t1", "w7-", "w7-tx", "w1234567-t1", " w7-t1", "w7-t1 "):
        assert names.worker_of(other) is None
