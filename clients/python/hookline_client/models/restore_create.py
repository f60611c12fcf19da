from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RestoreCreate")


@_attrs_define
class RestoreCreate:
    """Put a tenant's archived events received in [since, until) back into the ledger and
    deliver them again, with the webhook-ids they had (operators only). Times are ISO 8601 or
    a duration ago (`2h`, `7d`). Events already in the ledger are skipped and counted. The
    caller is recorded as requester.

        Attributes:
            reason (str): kept in the audit log
            since (str):
            tenant_id (str):
            until (str):
            dry_run (bool | Unset): count what would be restored; change nothing Default: False.
    """

    reason: str
    since: str
    tenant_id: str
    until: str
    dry_run: bool | Unset = False

    def to_dict(self) -> dict[str, Any]:
        reason = self.reason

        since = self.since

        tenant_id = self.tenant_id

        until = self.until

        dry_run = self.dry_run

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "reason": reason,
                "since": since,
                "tenant_id": tenant_id,
                "until": until,
            }
        )
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        reason = d.pop("reason")

        since = d.pop("since")

        tenant_id = d.pop("tenant_id")

        until = d.pop("until")

        dry_run = d.pop("dry_run", UNSET)

        restore_create = cls(
            reason=reason,
            since=since,
            tenant_id=tenant_id,
            until=until,
            dry_run=dry_run,
        )

        return restore_create
