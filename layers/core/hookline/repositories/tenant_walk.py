"""Which delivery lists walk a tenant's events (decision 0091).

Deliveries carry no tenant index. A list in one tenant's scope reads the tenant's events
newest first and each millisecond's deliveries by key (`api_list_tenant_deliveries`,
`delivery_log_by_tenant`), unless a filter names an index of its own: an endpoint
(`deliveries_endpoint_key_idx`, decision 0106), an event (its key range) or a state kept in a
partial index.
"""

from __future__ import annotations

# The states with a partial index (`delivering` is stored `queued`, decision 0085).
INDEXED_STATES = frozenset({"pending", "queued", "delivering", "failed", "dead"})


def walked_tenant(
    tenant: str | None,
    tenant_id: str | None,
    *,
    endpoint_id: str | None = None,
    event_id: str | None = None,
    state: str | None = None,
) -> str | None:
    """The tenant whose events the list walks, or None when it reads another index.

    `tenant` is the caller's scope and `tenant_id` a filter; when both are given and differ
    the list is empty, and the statement that does not walk says so without reading."""
    if endpoint_id is not None or event_id is not None or state in INDEXED_STATES:
        return None
    if tenant is not None and tenant_id is not None and tenant != tenant_id:
        return None
    return tenant if tenant is not None else tenant_id
