"""Text as Postgres can store it: what the receiver and the deliverer both record of what a
third party sent them (headers, types, response excerpts)."""

from __future__ import annotations


def storable_text(value: str, limit: int) -> str:
    """`value` as Postgres text can hold it: no NUL, no lone surrogates, at most `limit` long.

    Inbound types, ids and headers come from the provider (headers are not always signed);
    a character Postgres refuses must not turn an accepted webhook into a 500.
    """
    cleaned = value.replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")
    return cleaned[:limit]
