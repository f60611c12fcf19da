from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.status_deliveries import StatusDeliveries


T = TypeVar("T", bound="Status")


@_attrs_define
class Status:
    """How the caller's part of the pipeline stands.

    Attributes:
        deliveries (StatusDeliveries):
        endpoints_disabled (int):
        endpoints_enabled (int):
        events_24h (int):
        outbox_oldest_seconds (float | None):
        outbox_pending (int):
    """

    deliveries: StatusDeliveries
    endpoints_disabled: int
    endpoints_enabled: int
    events_24h: int
    outbox_oldest_seconds: float | None
    outbox_pending: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        deliveries = self.deliveries.to_dict()

        endpoints_disabled = self.endpoints_disabled

        endpoints_enabled = self.endpoints_enabled

        events_24h = self.events_24h

        outbox_oldest_seconds: float | None
        outbox_oldest_seconds = self.outbox_oldest_seconds

        outbox_pending = self.outbox_pending

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "deliveries": deliveries,
                "endpoints_disabled": endpoints_disabled,
                "endpoints_enabled": endpoints_enabled,
                "events_24h": events_24h,
                "outbox_oldest_seconds": outbox_oldest_seconds,
                "outbox_pending": outbox_pending,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.status_deliveries import StatusDeliveries  # noqa: PLC0415

        d = dict(src_dict)
        deliveries = StatusDeliveries.from_dict(d.pop("deliveries"))

        endpoints_disabled = d.pop("endpoints_disabled")

        endpoints_enabled = d.pop("endpoints_enabled")

        events_24h = d.pop("events_24h")

        def _parse_outbox_oldest_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        outbox_oldest_seconds = _parse_outbox_oldest_seconds(d.pop("outbox_oldest_seconds"))

        outbox_pending = d.pop("outbox_pending")

        status = cls(
            deliveries=deliveries,
            endpoints_disabled=endpoints_disabled,
            endpoints_enabled=endpoints_enabled,
            events_24h=events_24h,
            outbox_oldest_seconds=outbox_oldest_seconds,
            outbox_pending=outbox_pending,
        )

        status.additional_properties = d
        return status

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
