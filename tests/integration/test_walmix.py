"""The pipeline bench's WAL breakdown (`--wal-mix`) against a real server's WAL, read back
with pg_waldump: what a statement wrote is put on the table and index it wrote to, a day
partition's name folded so that days add up, and nothing the window did not hold is counted."""

from __future__ import annotations

import os

import psycopg
import pytest

from bench.walmix import wal_mix, wal_position

pytestmark = pytest.mark.integration


def test_wal_goes_to_the_tables_and_indexes_written(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT current_setting('data_directory')").fetchone()
        assert row is not None
        wal_dir = str(row[0])
        if not os.access(f"{wal_dir}/pg_wal", os.R_OK):
            pytest.skip("the server's pg_wal is not on this machine (DATABASE_URL)")
        conn.execute("CREATE TABLE wide (id integer PRIMARY KEY, body text NOT NULL)")
        conn.execute("CREATE TABLE narrow_d20260101 (id integer PRIMARY KEY)")
        conn.execute("CREATE TABLE narrow_d20260102 (id integer PRIMARY KEY)")
        start = wal_position(conn)
        conn.execute("INSERT INTO wide SELECT n, repeat('x', 500) FROM generate_series(1, 200) n")
        for day in ("20260101", "20260102"):
            conn.execute(f"INSERT INTO narrow_d{day} SELECT generate_series(1, 50)")
        end = wal_position(conn)
        conn.execute("INSERT INTO wide SELECT n, repeat('y', 500) FROM generate_series(201, 400) n")

        mix = wal_mix(conn, start, end)

    # 200 rows of 500 bytes went to the heap, each with its key in the index; the 200 rows
    # written after the window are not counted
    assert 200 * 500 <= mix.by_relation["wide"] < 1.5 * 200 * 500
    assert mix.by_relation["wide_pkey"] > 0
    # both days' tables under one name, and far less than the wide rows
    assert 0 < mix.by_relation["narrow_d*"] < mix.by_relation["wide"] / 5
    assert "narrow_d20260101" not in mix.by_relation
    assert mix.by_kind["Heap/INSERT"] + mix.by_kind["Heap2/MULTI_INSERT"] > 0
    assert mix.total >= sum(mix.by_relation[name] for name in ("wide", "wide_pkey", "narrow_d*"))
