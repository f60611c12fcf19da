"""Where a run's WAL went: the records between two WAL positions read back with
`pg_waldump`, their bytes summed by the relation each record's first block belongs to (a day
partition's name folded to `_d*`, so the same table and index add up across days) and by
record kind (`Heap/INSERT`, `Btree/INSERT_LEAF`, ... and the full-page images).

Needs the server's `pg_wal` on this machine and readable (a local server: bench/common.py's
durable LocalPostgres) and its segments kept until they are read (`wal_keep_size`,
`SERVER_SETTINGS`). A record's bytes are its total length; a full-page image's are the part of
it beyond the record's own (`len (rec/tot)`), and stay counted in its relation too.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Keeps the WAL a phase wrote until it is read back after the run.
SERVER_SETTINGS = {"wal_keep_size": "8GB"}
_RECORD = re.compile(r"rmgr: (\w+)\s+len \(rec/tot\):\s*(\d+)/\s*(\d+).*?desc: (\w+)(.*)$")
_BLOCK = re.compile(r"blkref #0: rel \d+/\d+/(\d+)")
_DAY = re.compile(r"_d\d{8}")


@dataclass
class WalMix:
    """Bytes by relation and by record kind, with the full-page images' share."""

    by_relation: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)
    full_pages: int = 0

    @property
    def total(self) -> int:
        return sum(self.by_relation.values())


def wal_position(conn: Any) -> str:
    """Where the server's next WAL record goes (inserted, maybe not yet written)."""
    return str(conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()[0])


def _await_written(conn: Any, end: str, seconds: float = 10.0) -> None:
    """Until the WAL up to `end` is in its files (a commit without waiting for the disk
    leaves it to the WAL writer, within `wal_writer_delay`)."""
    deadline = time.monotonic() + seconds
    while conn.execute("SELECT pg_current_wal_lsn() < %s::pg_lsn", (end,)).fetchone()[0]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the WAL up to {end} was not written in {seconds:.0f} s")
        time.sleep(0.05)


def wal_mix(conn: Any, start: str, end: str) -> WalMix:
    """What the WAL between `start` and `end` holds (conn: a superuser's, on the database the
    run wrote to, so its relations have names)."""
    from hookline_dev.localpg import find_pg_bin

    _await_written(conn, end)
    wal_dir = conn.execute("SELECT current_setting('data_directory')").fetchone()[0] + "/pg_wal"
    names = {
        str(node): _DAY.sub("_d*", name)
        for node, name in conn.execute(
            "SELECT pg_relation_filenode(oid), relname FROM pg_class "
            "WHERE pg_relation_filenode(oid) IS NOT NULL"
        ).fetchall()
    }
    dump = subprocess.run(
        [str(find_pg_bin() / "pg_waldump"), "-p", wal_dir, "-s", start, "-e", end],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    mix = WalMix()
    for line in dump.stdout.splitlines():
        record = _RECORD.search(line)
        if not record:
            continue
        rmgr, own, total, kind, rest = record.groups()
        block = _BLOCK.search(rest)
        relation = (names.get(block.group(1), f"relfilenode {block.group(1)}") if block
                    else "(no relation: commits, ...)")  # fmt: skip
        mix.by_relation[relation] += int(total)
        mix.by_kind[f"{rmgr}/{kind}"] += int(total)
        if "FPW" in rest:
            mix.full_pages += int(total) - int(own)
    if dump.returncode and not mix.by_relation:
        raise RuntimeError(f"pg_waldump failed: {dump.stderr.strip()[:300]}")
    return mix


def mix_rows(mix: WalMix, events: int, top: int = 10) -> list[list[str]]:
    """Table rows, per delivered event: the `top` relations, then the rest."""

    def per(b: int) -> str:
        return f"{b / events:.0f}" if events else "-"

    total = mix.total or 1
    rows = [[name, per(b), f"{100 * b / total:.0f} %"]
            for name, b in mix.by_relation.most_common(top)]  # fmt: skip
    rest = total - sum(b for _, b in mix.by_relation.most_common(top))
    if rest > 0:
        rows.append(["(other relations)", per(rest), f"{100 * rest / total:.0f} %"])
    return rows


def mix_kinds(mix: WalMix, events: int, top: int = 6) -> str:
    """One line, per delivered event: the leading record kinds and the full-page images."""
    kinds = ", ".join(f"{kind} {b / events:.0f}" for kind, b in mix.by_kind.most_common(top))
    return f"by record kind, B/ev: {kinds}; full-page images {mix.full_pages / events:.0f}"
