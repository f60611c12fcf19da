"""The chaos run's audit: what came out of it (the ledger, the deliveries, what the sinks
received, the logs) checked against the invariants, and the table it prints."""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.chaos_harness import ChaosRun

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{40,}")  # where a base64 MAC could be
TERMINAL = ("delivered", "failed", "dead")


@dataclass
class Outcome:
    """What came out, and every invariant that failed."""

    rows: list[tuple[str, object]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # the figures, for assertions

    def table(self) -> str:
        width = max(len(k) for k, _ in self.rows) if self.rows else 10
        lines = [f"  {k:<{width}}  {v}" for k, v in self.rows]
        if self.violations:
            lines.append("VIOLATIONS:")
            lines += [f"  - {v}" for v in self.violations]
        else:
            lines.append("  no violations")
        return "\n".join(lines)


def secret_leaks(
    workdir: Path, secrets: list[str], signature_headers: list[str]
) -> tuple[set[str], int, int, int]:
    """Every secret (whole, or its key without `whsec_`) and every MAC of the signature
    headers (`v1,<base64> v1,<base64>`) that appears in a `*.log` file under `workdir`:
    (found, files, characters scanned, how many were looked for). Secrets are searched as
    substrings; the many MACs as every window of their length inside each run of base64
    characters, so a MAC is found whatever surrounds it."""
    needles = {x for s in secrets for x in (s, s.removeprefix("whsec_"))}
    macs = {e.partition(",")[2] for h in signature_headers for e in h.split()} - {""}
    lengths = {len(m) for m in macs}
    found: set[str] = set()
    files = size = 0
    for path in sorted(workdir.rglob("*.log")):
        text = path.read_text(errors="replace")
        files, size = files + 1, size + len(text)
        found |= {x for x in needles if x in text}
        for run in _BASE64_RUN.findall(text):
            for n in lengths:
                found |= {run[i : i + n] for i in range(len(run) - n + 1)} & macs
    return found, files, size, len(needles) + len(macs)


def audit(
    run: ChaosRun, drained: bool, send_seconds: float, drain_seconds: float, final: dict[str, Any]
) -> Outcome:
    """What came out of the run, in rows and counts, and every invariant that failed."""
    out = Outcome()
    v = out.violations
    v += run.chaos_errors
    if not drained:
        v.append(f"not every delivery finished within {run.o.drain_timeout:.0f}s")
    if run.sent.rejected:
        v.append(f"{len(run.sent.rejected)} sends refused with a 4xx, e.g. {run.sent.rejected[:3]}")
    if run.sent.crosswired:
        v.append(f"{len(run.sent.crosswired)} retried sends answered with another event id")
    accepted = run.sent.accepted
    events = run._query(
        "SELECT id, dedupe_key, type FROM events WHERE dedupe_key LIKE %s",
        f"msg_chaos_{run.o.seed}_%",
    )
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        by_key[e["dedupe_key"]].append(e)
    lost = [
        n
        for n, eid in accepted.items()
        if eid not in {e["id"] for e in by_key[f"msg_chaos_{run.o.seed}_{n}"]}
    ]
    twice = [k for k, rows in by_key.items() if len(rows) > 1]
    if lost:
        v.append(f"{len(lost)} accepted events not in the ledger, e.g. n={lost[:5]}")
    if twice:
        v.append(f"{len(twice)} webhook ids stored as more than one event")
    if len(accepted) != run.o.events:
        v.append(f"only {len(accepted)} of {run.o.events} events were accepted")
    n_of_event = {e["id"]: int(e["dedupe_key"].rsplit("_", 1)[1]) for e in events}

    deliveries = run._query(
        "SELECT d.id, d.event_id, d.endpoint_id, d.state, d.last_error, d.attempt_count"
        " FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.dedupe_key LIKE %s",
        f"msg_chaos_{run.o.seed}_%",
    )
    index_of = {eid: k for t in run.tenants for k, eid, _ in t.endpoints}
    pairs = Counter((d["event_id"], d["endpoint_id"]) for d in deliveries)
    created_twice = sum(1 for c in pairs.values() if c > 1)
    if created_twice:
        v.append(f"{created_twice} (event, endpoint) pairs with more than one delivery")
    # Expected: every matching endpoint of the event's tenant; the 410 endpoint only until
    # it was disabled (at most one then).
    have: dict[int, set[int]] = defaultdict(set)
    delivery_of: dict[tuple[int, int], str] = {}
    for d in deliveries:
        n = n_of_event[d["event_id"]]
        k = index_of[d["endpoint_id"]]
        have[n].add(k)
        delivery_of[(n, k)] = d["id"]
    missing = extra = 0
    for n in accepted:
        tenant = run.tenants[run.sent.tenant_of[n]]
        kind = run.sent.type_of[n]
        expected = {k for k, _, f in tenant.endpoints if kind in f or "order.*" in f}
        required = expected - {0}
        missing += len(required - have[n])
        extra += len(have[n] - expected)
    if missing:
        v.append(f"{missing} deliveries missing (event matched the endpoint)")
    if extra:
        v.append(f"{extra} deliveries to endpoints the event did not match")
    states = Counter(d["state"] for d in deliveries)
    unfinished = sum(n for s, n in states.items() if s not in TERMINAL)
    if unfinished:
        v.append(f"{unfinished} deliveries not finished: {dict(states)}")
    no_reason = [
        d["id"] for d in deliveries if d["state"] in ("failed", "dead") and not d["last_error"]
    ]
    if no_reason:
        v.append(f"{len(no_reason)} failed/dead deliveries without a reason")

    # The subscribers' side.
    hits = list(run.sink.hits)
    ok_ids = {h.webhook_id for h in hits if 200 <= h.status < 300}
    not_ok = [d["id"] for d in deliveries if d["state"] == "delivered" and d["id"] not in ok_ids]
    if not_ok:
        v.append(f"{len(not_ok)} delivered deliveries never answered 2xx at their sink")
    unsigned = sum(1 for h in hits if not h.signed)
    if unsigned:
        v.append(f"{unsigned} requests failed signature verification at the sink")
    wrong_id = sum(1 for h in hits if delivery_of.get((h.n, h.endpoint)) != h.webhook_id)
    if wrong_id:
        v.append(f"{wrong_id} requests whose webhook-id is not their delivery's id")
    ids_per_delivery: dict[tuple[int, int], set[str]] = defaultdict(set)
    for h in hits:
        ids_per_delivery[(h.n, h.endpoint)].add(h.webhook_id)
    several = sum(1 for ids in ids_per_delivery.values() if len(ids) > 1)
    if several:
        v.append(f"{several} (event, endpoint) pairs received under more than one webhook-id")
    ok_counts = Counter(h.webhook_id for h in hits if 200 <= h.status < 300)
    duplicates = sum(c - 1 for c in ok_counts.values() if c > 1)
    cap_seen = run.sink.max_in_flight[1]
    if cap_seen > run.o.slow_cap:
        v.append(f"the slow endpoint saw {cap_seen} requests at once (cap {run.o.slow_cap})")

    leaks, scanned, scanned_bytes, needles = run._secret_leaks(hits)
    if leaks:
        v.append(f"{len(leaks)} secrets or signatures appear in the logs: {sorted(leaks)[:3]}")

    repaired = {k: n for k, n in final["repairs"].items() if n}
    if repaired or final["unreconciled"]:
        v.append(
            f"the final reconcile repaired {repaired or 'nothing'} and left "
            f"{final['unreconciled']} unreconciled: {final['findings']}"
        )
    attempts = run._query(
        "SELECT count(*) AS n FROM attempt_log a JOIN deliveries d ON d.id = a.delivery_id"
        " JOIN events e ON e.id = d.event_id WHERE e.dedupe_key LIKE %s",
        f"msg_chaos_{run.o.seed}_%",
    )[0]["n"]
    runs = run._query(
        "SELECT key, sum(value::bigint) AS n FROM reconcile_runs, jsonb_each_text(repairs)"
        " WHERE trigger <> 'chaos-final' GROUP BY key HAVING sum(value::bigint) > 0"
    )
    repairs_during = {r["key"]: int(r["n"]) for r in runs}
    kills = ", ".join(f"{r} {p.kills}" for r, p in run.roles.items())
    pg = f"{run.pg_restarts} (immediate stop, down {run.pg_down_seconds:.1f}s)"
    reconciled = f"repaired {repaired or 'nothing'}, unreconciled {final['unreconciled']}"
    total = time.monotonic() - run.started
    timing = f"{send_seconds:.0f}s / {drain_seconds:.0f}s / {total:.0f}s"
    served = run.sink.served
    out.counts = {
        **{f"kills {r}": p.kills for r, p in run.roles.items()},
        "pg_restarts": run.pg_restarts,
        "deleted": len(run.deleted),
        **{f"served {k}": n for k, n in served.items()},
        "sender_retries": sum(run.sent.retries.values()),
        "accepted": len(accepted),
        "lost": len(lost),
        "deliveries": len(deliveries),
        "created_twice": created_twice,
        **{f"state {k}": n for k, n in states.items()},
        "attempts": attempts,
        "duplicates_at_sink": duplicates,
        "max_in_flight_slow": cap_seen,
        "secret_leaks": len(leaks),
        "log_files_scanned": scanned,
        "secrets_looked_for": needles,
    }
    rows = out.rows
    rows += [
        ("INJECTED", ""),
        ("SIGKILLs per role", f"{sum(p.kills for p in run.roles.values())} ({kills})"),
        ("Postgres restarts", pg),
        ("queue messages deleted", len(run.deleted)),
        ("sink answers 5xx", served["5xx"]),
        ("sink timeouts (held)", served["timeout"]),
        ("sink 429 + Retry-After", served["429"]),
        ("sink 410", served["410"]),
        ("requests torn by a kill", served["torn"]),
        ("sender retries", f"{sum(run.sent.retries.values())} {dict(run.sent.retries)}"),
        ("OUTCOME", ""),
        ("events offered / accepted", f"{run.o.events} / {len(accepted)}"),
        ("events in the ledger", f"{len(by_key)} (stored twice: {len(twice)})"),
        ("events lost", len(lost)),
        ("deliveries", f"{len(deliveries)} {dict(sorted(states.items()))}"),
        ("deliveries created twice", created_twice),
        ("deliveries missing / unexpected", f"{missing} / {extra}"),
        ("attempts (retries)", f"{attempts} ({attempts - len(deliveries)})"),
        ("requests at sinks", len(hits)),
        ("duplicate 2xx at sinks", f"{duplicates} (at-least-once; allowed)"),
        ("webhook-id mismatches", wrong_id + several),
        ("slow endpoint max in flight", f"{cap_seen} (cap {run.o.slow_cap})"),
        ("reconcile repairs during the run", repairs_during),
        ("secrets/signatures in logs", f"{len(leaks)} of {needles} looked for, in {scanned}"
         f" log files ({scanned_bytes / 1e6:.1f} MB)"),
        ("final reconcile", reconciled),
        ("time send / drain / total", timing),
    ]  # fmt: skip
    return out
