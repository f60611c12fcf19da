"""`hookline tenants|sources|endpoints|events|event-types|quarantine|notifications` (and
`publish`): each command is one management API request (`hookline_dev.apiclient`), in this
process or to `--api URL`. One module per resource; `parsers` holds what their parsers share."""

from __future__ import annotations

import argparse
from typing import Any

from hookline_dev.commands.resources import (
    endpoints,
    event_types,
    events,
    notifications,
    quarantine,
    sources,
    tenants,
)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `tenants`, `sources`, `endpoints`, `events`, `event-types`, `publish`, `quarantine`
    and `notifications`, in that order (`hookline --help` lists them so; `retention` adds to
    `tenants`, after them)."""
    for resource in (tenants, sources, endpoints, events, event_types, quarantine, notifications):
        resource.register(sub, common)
