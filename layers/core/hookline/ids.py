"""Prefixed, time-ordered identifiers (ULIDs): sortable by creation, good B-tree locality."""

from __future__ import annotations

from ulid import ULID


def new_id(prefix: str) -> str:
    """A new id such as `evt_01JD…`."""
    return f"{prefix}_{ULID()}"
