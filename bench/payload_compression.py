"""What a payload's size and its TOAST compression cost the primary per stored event.

The pipeline bench sends 1 KB payloads, which Postgres stores as they are. Real webhooks are
often larger: a GitHub push with a few commits is 5-10 KB, a Stripe event 2-6 KB. A row over
~2 KB is compressed by TOAST, with `default_toast_compression` (pglz unless set; lz4 since
Postgres 14). This bench stores GitHub-push-shaped JSON payloads (random SHAs, commit
messages from a small vocabulary, ~4x compressible by zlib, unlike padding) one
autocommitted insert at a time, as the receiver does. Each size runs under each compression,
and the 1 KB row in the same run is the baseline. It reports per row: the server backend's
CPU, WAL bytes and the bytes the table keeps.

    .venv/bin/python bench/payload_compression.py [--rows 3000] [--sizes 1000,3000,8000]
        [--rounds 2]

A benchmark: prints, never fails.
"""

from __future__ import annotations

import argparse
import json
import random

from common import backend_cpu_seconds, bench_database, machine_facts, print_table

WORDS = (
    "fix", "add", "update", "remove", "refactor", "test", "docs", "build", "bump", "deps", "api",
    "handler", "service", "query", "index", "retry", "timeout", "error", "cache", "config",
    "deploy", "release", "merge", "branch", "feature", "bug", "typo", "lint", "format", "schema",
    "migration", "endpoint", "webhook", "signature", "payload", "event", "delivery", "queue",
)  # fmt: skip
METHODS = ("pglz", "lz4")


def push_event(size: int, seed: int) -> bytes:
    """A GitHub push-shaped JSON body of at least `size` bytes."""
    draw = random.Random(seed)

    def sha() -> str:
        return draw.randbytes(20).hex()

    def path() -> str:
        return f"src/{draw.choice(WORDS)}/{draw.choice(WORDS)}.py"

    repo = f"acme/{draw.choice(WORDS)}-{draw.choice(WORDS)}"
    doc: dict[str, object] = {
        "ref": "refs/heads/main", "before": sha(), "after": sha(),
        "repository": {"id": draw.randint(1, 10**9), "full_name": repo,
                       "html_url": f"https://github.com/{repo}",
                       "owner": {"login": "acme", "id": 1234, "type": "Organization"}},
        "pusher": {"name": "dev1", "email": "dev1@example.com"},
    }  # fmt: skip
    commits: list[dict[str, object]] = []
    doc["commits"] = commits
    while len(json.dumps(doc)) < size:
        commit = sha()
        commits.append({
            "id": commit, "tree_id": sha(), "distinct": True,
            "message": " ".join(draw.choice(WORDS) for _ in range(draw.randint(3, 14))),
            "timestamp": f"2026-12-04T22:{draw.randint(0, 59):02d}:{draw.randint(0, 59):02d}Z",
            "url": f"https://github.com/{repo}/commit/{commit}",
            "author": {"name": f"Dev {draw.randint(1, 50)}",
                       "email": f"dev{draw.randint(1, 50)}@example.com"},
            "added": [path() for _ in range(draw.randint(0, 3))],
            "modified": [path() for _ in range(draw.randint(1, 4))],
        })  # fmt: skip
    return json.dumps(doc).encode()


def measure(url: str, method: str, payloads: list[bytes]) -> tuple[float, float, float]:
    """(backend CPU µs, WAL B, stored B) per row for `payloads` inserted one at a time."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_payloads")
        conn.execute(f"SET default_toast_compression = {method}")  # one of METHODS
        conn.execute("CREATE TABLE bench_payloads (id bigint PRIMARY KEY, payload bytea)")
        lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
        cpu = backend_cpu_seconds(conn) or 0.0
        for n, payload in enumerate(payloads):
            conn.execute("INSERT INTO bench_payloads VALUES (%s, %s)", (n, payload))
        cpu = (backend_cpu_seconds(conn) or 0.0) - cpu
        row = conn.execute(
            "SELECT pg_current_wal_lsn() - %s::pg_lsn, pg_total_relation_size('bench_payloads')",
            (lsn[0] if lsn else None,),
        ).fetchone()
        wal, stored = (float(row[0]), float(row[1])) if row else (0.0, 0.0)
        conn.execute("DROP TABLE bench_payloads")
    rows = len(payloads)
    return cpu * 1e6 / rows, wal / rows, stored / rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--sizes", default="1000,3000,8000")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[tuple[int, str], list[tuple[float, float, float]]] = {}
    means: dict[int, float] = {}
    with bench_database("payload_compression") as (url, where):
        print(f"Postgres: {where}; machine: {machine_facts()}")
        for size in sizes:
            payloads = [push_event(size, seed) for seed in range(args.rows)]
            means[size] = sum(map(len, payloads)) / len(payloads)
            print(f"  {size}: payloads of {means[size]:,.0f} B on average ...", flush=True)
            for turn in range(args.rounds):  # taking turns: pglz first, then lz4 first
                for method in METHODS if turn % 2 == 0 else reversed(METHODS):
                    results.setdefault((size, method), []).append(measure(url, method, payloads))
    base = min(r[0] for r in results[(sizes[0], METHODS[0])])
    table = []
    for (size, method), runs in results.items():
        cpu = sorted(r[0] for r in runs)
        wal, stored = runs[0][1], runs[0][2]
        table.append((f"{means[size]:,.0f} B, {method}", f"{cpu[0]:.0f}-{cpu[-1]:.0f}",
                      f"{cpu[0] - base:+.0f}", f"{wal:,.0f}", f"{stored:,.0f}"))  # fmt: skip
    print_table(
        ("payload (mean), compression", "backend CPU µs/row", "vs the first", "WAL B/row",
         "stored B/row"),
        table,
    )  # fmt: skip
    print(f"machine after: {machine_facts()}")


if __name__ == "__main__":
    main()
