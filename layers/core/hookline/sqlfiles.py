"""Named SQL queries kept in `.sql` files, parsed once.

A file holds blocks that start with a marker line `-- query_name --`; the statement
follows and uses `%(param)s` placeholders. Whole-line `--` comments are documentation for the
reader and are not sent: psycopg would read a placeholder-like text in one as a parameter.
Only repositories use these.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_MARKER = re.compile(r"^--\s*([a-z_][a-z0-9_]*)\s*--\s*$", re.MULTILINE)


def parse_queries(text: str) -> dict[str, str]:
    """Split one `.sql` document into {name: statement}."""
    parts = _MARKER.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"query {name!r} is defined twice")
        statement = "\n".join(
            line for line in body.splitlines() if not line.lstrip().startswith("--")
        )
        queries[name] = statement.strip().rstrip(";")
    return queries


@cache
def queries() -> dict[str, str]:
    """Every named query of every file in `hookline/sql`."""
    found: dict[str, str] = {}
    for entry in sorted(resources.files("hookline.sql").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".sql"):
            for name, sql in parse_queries(entry.read_text()).items():
                if name in found:
                    raise ValueError(f"query {name!r} is defined in two files")
                found[name] = sql
    return found


def query(name: str) -> str:
    """The statement called `name`."""
    return queries()[name]
