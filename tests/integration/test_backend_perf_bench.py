"""`bench/pipeline.py --perf` gives each Postgres backend's CPU to its stage, part by part
(bench/backend_perf.py): the figures decision 0114 was taken on. A real `perf` recording of a
real server; skipped where Linux's perf is not installed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.common import REPO, backend_us

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("perf") is None, reason="needs Linux's perf"),
]

SPIN = """CREATE FUNCTION bench_spin(n integer) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    total bigint := 0;
BEGIN
    FOR i IN 1..n LOOP
        total := total + i;
    END LOOP;
    RETURN total;
END $$"""


@pytest.fixture()
def backend_perf(monkeypatch: pytest.MonkeyPatch) -> Any:
    """bench/backend_perf, imported as the pipeline bench imports it."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import backend_perf

    return backend_perf


def test_each_backends_cpu_goes_to_its_stage_and_its_parts(
    backend_perf: Any, database_url: str, tmp_path: Path
) -> None:
    # Given two backends, each about to run a PL/pgSQL loop of its own length
    with (
        psycopg.connect(database_url, autocommit=True) as first,
        psycopg.connect(database_url, autocommit=True) as second,
    ):
        first.execute(SPIN)
        data = tmp_path / "perf.data"
        # When they run one after the other while perf records every CPU
        recording = backend_perf.start(data)  # returns once perf records
        spent = {}
        for conn, loops in ((first, 3_000_000), (second, 1_000_000)):
            before = backend_us(conn)
            conn.execute("SELECT bench_spin(%s)", (loops,))
            spent[conn.info.backend_pid] = backend_us(conn) - before
        backend_perf.stop(recording)
        stages = {first.info.backend_pid: "receiver", second.info.backend_pid: "deliver"}
        parts = backend_perf.by_stage(data, stages, events=1)
    # Then each stage holds its own backend's CPU, within what sampling can tell
    for pid, stage in stages.items():
        whole = parts[stage]["the whole backend"]
        assert 0.7 * spent[pid] < whole < 1.3 * spent[pid], (stage, parts[stage], spent[pid])
        # And the part its stack was in holds nearly all of it, the parts it was not in nothing
        assert parts[stage]["PL/pgSQL functions"] > 0.8 * whole
        assert parts[stage]["inserts"] == parts[stage]["CHECK constraints"] == 0
    # And a part is per delivered event: ten events, a tenth each
    tenth = backend_perf.by_stage(data, stages, events=10)["receiver"]["the whole backend"]
    assert tenth == pytest.approx(parts["receiver"]["the whole backend"] / 10)
