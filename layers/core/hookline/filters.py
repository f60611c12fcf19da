r"""Event-type filters of an endpoint: which events it wants.

An event type is a dotted name such as `invoice.paid` or
`customer.subscription.created`. A filter is one of:

* `*` — every event type;
* an exact name, `invoice.paid` — that type only (case-sensitive);
* a name with `*` standing for whole segments: `invoice.*` matches every type
  that starts with `invoice.` (`invoice.paid`, `invoice.line.added`, but not
  `invoice` itself), `*.created` every type that ends with `.created`,
  `customer.*.deleted` everything in between. A `*` spans one or more segments,
  dots included.

An endpoint with no filters receives everything. An event matches an endpoint
if any of its filters matches.

`*` may only be a whole segment (`inv*` is refused by `validate_filter`), so
for well-formed event types it means exactly "one or more segments" and
translates to SQL `LIKE` with `%`. Python (`matches`) and Postgres agree on
every string because both use the same translation: `*` is "any run of
characters", everything else literal.

In SQL the same translation is written out, so the fan-out can join events to
`endpoints.event_types` (raw patterns, empty = every type) in one query::

    (cardinality(ep.event_types) = 0
     OR EXISTS (
         SELECT 1 FROM unnest(ep.event_types) AS f(pattern)
         WHERE e.type LIKE replace(replace(replace(replace(
             f.pattern, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%')))

(backslash is Postgres' default LIKE escape; `standard_conforming_strings` is on
by default, so `'\'` is one backslash). Where patterns are at hand in Python,
`sql_like_patterns` gives the same LIKE patterns for `e.type LIKE ANY(%(patterns)s)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from hookline.errors import BadRequest

WILDCARD = "*"
MAX_FILTER_LENGTH = 255
# Characters seen in provider event types: Stripe `invoice.paid`, GitHub
# `pull_request`, Shopify `orders/create`, a few use `-` or `:`.
_SEGMENT = re.compile(r"^[A-Za-z0-9_\-:/]+$")


def validate_filter(pattern: str) -> str:
    """Return `pattern` if it is a valid filter, else raise `BadRequest` saying why."""
    if not pattern:
        raise BadRequest("event filter must not be empty")
    if len(pattern) > MAX_FILTER_LENGTH:
        raise BadRequest(f"event filter is longer than {MAX_FILTER_LENGTH} characters")
    for segment in pattern.split("."):
        if segment == WILDCARD:
            continue
        if not segment:
            raise BadRequest(f"event filter {pattern!r} has an empty segment")
        if WILDCARD in segment:
            raise BadRequest(f"event filter {pattern!r}: '*' must be a whole segment")
        if not _SEGMENT.match(segment):
            raise BadRequest(
                f"event filter {pattern!r} may only contain letters, digits, '_', '-', ':', "
                "'/', '.' and '*'"
            )
    return pattern


def validate_filters(patterns: Sequence[str]) -> list[str]:
    """Validate every filter of an endpoint; return them without duplicates, order kept."""
    if isinstance(patterns, str):
        raise BadRequest("event filters must be a list of strings")
    return list(dict.fromkeys(validate_filter(p) for p in patterns))


def matches(filters: Sequence[str], event_type: str) -> bool:
    """Whether an event of `event_type` goes to an endpoint with these filters."""
    if not filters:
        return True
    return any(_regex(pattern).fullmatch(event_type) is not None for pattern in filters)


def to_sql_like(pattern: str) -> str:
    """The Postgres LIKE pattern (backslash escape) equivalent to one filter."""
    escaped = pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace(WILDCARD, "%")


def sql_like_patterns(filters: Sequence[str]) -> list[str]:
    """LIKE patterns for `event_type LIKE ANY(...)`; no filters becomes `['%']` (everything)."""
    if not filters:
        return ["%"]
    return [to_sql_like(p) for p in dict.fromkeys(filters)]


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    # The same reading as LIKE: `*` is any run of characters (as `%`), the rest literal.
    return re.compile(".*".join(re.escape(part) for part in pattern.split(WILDCARD)), re.DOTALL)
