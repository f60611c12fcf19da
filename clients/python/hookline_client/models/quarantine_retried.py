from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.still_failing import StillFailing


T = TypeVar("T", bound="QuarantineRetried")


@_attrs_define
class QuarantineRetried:
    """What a retry decided: deliveries made, pairs released without one (the pattern does
    not match, or the endpoint no longer takes the event), and those still failing.

        Attributes:
            delivered (int):
            released (int):
            still_failing (list[StillFailing]):
    """

    delivered: int
    released: int
    still_failing: list[StillFailing]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        delivered = self.delivered

        released = self.released

        still_failing = []
        for still_failing_item_data in self.still_failing:
            still_failing_item = still_failing_item_data.to_dict()
            still_failing.append(still_failing_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "delivered": delivered,
                "released": released,
                "still_failing": still_failing,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.still_failing import StillFailing  # noqa: PLC0415

        d = dict(src_dict)
        delivered = d.pop("delivered")

        released = d.pop("released")

        still_failing = []
        _still_failing = d.pop("still_failing")
        for still_failing_item_data in _still_failing:
            still_failing_item = StillFailing.from_dict(still_failing_item_data)

            still_failing.append(still_failing_item)

        quarantine_retried = cls(
            delivered=delivered,
            released=released,
            still_failing=still_failing,
        )

        quarantine_retried.additional_properties = d
        return quarantine_retried

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
