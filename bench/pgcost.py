"""What a run costs Postgres, measured from outside the code under test: round trips counted
in a process (psycopg's socket waits, and the receiver's statement sent to libpq), the local
server's CPU by stage (from /proc), its WAL bytes and commits."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# A backend the bench does not count, by its application_name: its CPU is in no stage, its
# round trips in none (`bench/pipeline.py --uncounted-claim`, a probe: decision 0107).
UNCOUNTED = "uncounted"


def count_round_trips() -> list[int]:
    """Count every psycopg round trip of this process (each statement, BEGIN, COMMIT): the
    connection's waits that touch the socket (a COMMIT of an idle autocommit connection, as
    the pool's return runs, waits for nothing and is not counted), but an UNCOUNTED
    connection's."""
    import psycopg

    counter = [0]
    wait = psycopg.Connection.wait
    skip = os.environ.get("BENCH_UNCOUNTED_CLAIM") == "1"

    def counted(gen: Any) -> Any:
        try:
            value = gen.send(None)
        except StopIteration as done:
            return done.value
        counter[0] += 1
        while True:
            try:
                value = gen.send((yield value))
            except StopIteration as done:
                return done.value

    def counting(self: Any, gen: Any, *args: Any, **kwargs: Any) -> Any:
        if skip and self.info.parameter_status("application_name") == UNCOUNTED:
            return wait(self, gen, *args, **kwargs)
        return wait(self, counted(gen), *args, **kwargs)

    psycopg.Connection.wait = counting  # type: ignore[method-assign]
    # The receiver's statement goes to libpq itself (decision 0077): one round trip per call.
    from hookline.repositories import ledger

    accept_rows = ledger._accept_rows

    def accept_counted(conn: Any, params: Any) -> Any:
        waits = counter[0]
        try:
            return accept_rows(conn, params)
        finally:
            if counter[0] == waits:  # not through psycopg's wait, so not counted there
                counter[0] += 1

    ledger._accept_rows = accept_counted
    return counter


def server_cpu_by_pid(url: str, admin_pid: int) -> dict[int, tuple[str, float]] | None:
    """Each process of the local server: its stage (application_name) for a backend, "server"
    for the server's own processes, and its CPU seconds so far; None when the server is not
    on this machine. Neither `admin_pid` (the caller's connection) nor the connection this
    reading opens is in it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid, application_name, backend_type FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid()"
        ).fetchall()
    seconds: dict[int, tuple[str, float]] = {}
    for pid, app, backend_type in rows:
        if pid == admin_pid:
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            if backend_type == "client backend":
                continue
            return None
        role = app if backend_type == "client backend" and app else "server"
        seconds[pid] = (role, (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK"))
    return seconds


def cpu_by_role(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
) -> dict[str, float]:
    """The CPU seconds spent between two readings, by stage: each process of `after` less
    what it had in `before` (nothing, if it started since). A process that exited between the
    two is left out, its figure gone from /proc: subtracting what it had before would count
    against the others (an autovacuum worker ending mid-phase read as negative CPU). An
    UNCOUNTED backend is left out too."""
    spent: dict[str, float] = {}
    for pid, (role, cpu) in after.items():
        if role == UNCOUNTED:
            continue
        earlier = before.get(pid)
        spent[role] = spent.get(role, 0.0) + cpu - (earlier[1] if earlier else 0.0)
    return spent


def wal_and_commits(conn: Any) -> tuple[int, int]:
    """The WAL position in bytes and this database's commits so far."""
    row = conn.execute(
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, xact_commit "
        "FROM pg_stat_database WHERE datname = current_database()"
    ).fetchone()
    return int(row[0]), int(row[1])
