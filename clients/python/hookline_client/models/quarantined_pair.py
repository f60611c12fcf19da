from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="QuarantinedPair")


@_attrs_define
class QuarantinedPair:
    """An (event, endpoint) pair whose matching raised: undecided until retried.

    Attributes:
        endpoint_id (str):
        event_id (str):
        failures (int):
        last_failed_at (datetime.datetime):
        quarantined_at (datetime.datetime):
        reason (str):
        stage (str): what found it: fanout, reconcile, replay or retry
        tenant_id (str):
    """

    endpoint_id: str
    event_id: str
    failures: int
    last_failed_at: datetime.datetime
    quarantined_at: datetime.datetime
    reason: str
    stage: str
    tenant_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        event_id = self.event_id

        failures = self.failures

        last_failed_at = self.last_failed_at.isoformat()

        quarantined_at = self.quarantined_at.isoformat()

        reason = self.reason

        stage = self.stage

        tenant_id = self.tenant_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "endpoint_id": endpoint_id,
                "event_id": event_id,
                "failures": failures,
                "last_failed_at": last_failed_at,
                "quarantined_at": quarantined_at,
                "reason": reason,
                "stage": stage,
                "tenant_id": tenant_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        event_id = d.pop("event_id")

        failures = d.pop("failures")

        last_failed_at = datetime.datetime.fromisoformat(d.pop("last_failed_at"))

        quarantined_at = datetime.datetime.fromisoformat(d.pop("quarantined_at"))

        reason = d.pop("reason")

        stage = d.pop("stage")

        tenant_id = d.pop("tenant_id")

        quarantined_pair = cls(
            endpoint_id=endpoint_id,
            event_id=event_id,
            failures=failures,
            last_failed_at=last_failed_at,
            quarantined_at=quarantined_at,
            reason=reason,
            stage=stage,
            tenant_id=tenant_id,
        )

        quarantined_pair.additional_properties = d
        return quarantined_pair

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
