from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.resent_skipped import ResentSkipped


T = TypeVar("T", bound="Resent")


@_attrs_define
class Resent:
    """What a resend did (the replay summary of one delivery).

    Attributes:
        audit_id (int | None):
        delivery_id (str):
        enqueued (int):
        skipped (ResentSkipped):
    """

    audit_id: int | None
    delivery_id: str
    enqueued: int
    skipped: ResentSkipped
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        audit_id: int | None
        audit_id = self.audit_id

        delivery_id = self.delivery_id

        enqueued = self.enqueued

        skipped = self.skipped.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "audit_id": audit_id,
                "delivery_id": delivery_id,
                "enqueued": enqueued,
                "skipped": skipped,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.resent_skipped import ResentSkipped  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_audit_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        audit_id = _parse_audit_id(d.pop("audit_id"))

        delivery_id = d.pop("delivery_id")

        enqueued = d.pop("enqueued")

        skipped = ResentSkipped.from_dict(d.pop("skipped"))

        resent = cls(
            audit_id=audit_id,
            delivery_id=delivery_id,
            enqueued=enqueued,
            skipped=skipped,
        )

        resent.additional_properties = d
        return resent

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
