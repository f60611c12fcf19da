"""Replay: an operator re-delivers what one selector picks, at a chosen pace, audited.

Selectors (exactly one):

* ``delivery_ids`` — those deliveries;
* ``event_ids`` — every delivery of those events (``states`` narrows);
* ``endpoint_id`` + ``since`` [+ ``until``] — deliveries to one endpoint of events received
  in the window (``states``, default failed and dead);
* ``since`` [+ ``until``] [+ ``tenant_id``] [+ ``event_type``] — deliveries of events
  received in the window (``states``, default failed and dead);
* any event selector with ``refanout: true`` — re-create the selected events' missing
  deliveries from the ledger and send those (never touching the ones that exist);
* ``redrive_dlq: <group>`` — move a tenant group's dead-letter queue back to its queue.

A replayed delivery keeps its id, which is its ``webhook-id``, so receivers can deduplicate.
It starts a new run: queued with a new generation (any older queue message of it becomes
stale), a fresh deadline and retry schedule. One still in flight is skipped, with the reason.
Every replay, dry runs and failures included, writes one audit entry.

A caller that shows progress (the API's replay runs, docs/decisions/0016) passes `progress`:
it is called with the live ReplayResult when the run starts, once the selection is known
(`selected` is then the total) and after every batch; it must be quick (throttle there).

A run that `keep_going` stops (its function's time is running out) sets `result.resume`:
where a later run carries on. Selections are walked in a stable order, so that is the last
id dealt with (docs/decisions/0021). A caller that continues (`continues=True`, the API's
recorded replays) stores it with the summary so far and starts the next run with both; the
audit entry is written once, by the run that finishes. A caller that does not (the console's
and `--function`'s synchronous runs) gets `stopped_early` and `not_reached` instead.

The package, one file per idea: `request` (parsing and validation), `selection`, `pacing`,
`sending`, `refanout`, `redrive`, `runner` (one request carried out and audited), `records`
(the API's recorded replays), `continuation` (running them across function runs), `sweeping`
(reconcile's step), `starters` (where a next run starts). Its queries are
`hookline.repositories.replay` and `hookline/sql/replay.sql`.
"""

from __future__ import annotations

from hookline.replay.context import Progress, ReplayOptions
from hookline.replay.continuation import run_recorded_replay
from hookline.replay.pacing import Pacer
from hookline.replay.records import create_replay, get_replay, list_replays
from hookline.replay.request import ReplayRequest, parse_instant, parse_request
from hookline.replay.result import ReplayResult, Resume
from hookline.replay.runner import Replayer, run_replay
from hookline.replay.starters import (
    Continue,
    in_thread,
    invoker,
    start_in_thread,
    start_payload,
    wait_for_local_replays,
)
from hookline.replay.sweeping import sweep

__all__ = [
    "Continue",
    "Pacer",
    "Progress",
    "ReplayOptions",
    "ReplayRequest",
    "ReplayResult",
    "Replayer",
    "Resume",
    "create_replay",
    "get_replay",
    "in_thread",
    "invoker",
    "list_replays",
    "parse_instant",
    "parse_request",
    "run_recorded_replay",
    "run_replay",
    "start_in_thread",
    "start_payload",
    "sweep",
    "wait_for_local_replays",
]
