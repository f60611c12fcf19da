from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.source_activity_rejected import SourceActivityRejected


T = TypeVar("T", bound="SourceActivity")


@_attrs_define
class SourceActivity:
    """What a source last saw: handshakes and rejections store no event (decision 0038).

    Attributes:
        handshakes (int):
        last_accepted_at (datetime.datetime | None):
        last_handshake_at (datetime.datetime | None):
        last_handshake_kind (None | str):
        last_received_at (datetime.datetime | None): The latest of the three below.
        last_rejected_at (datetime.datetime | None):
        last_rejected_reason (None | str):
        rejected (SourceActivityRejected): Rejections by reason.
    """

    handshakes: int
    last_accepted_at: datetime.datetime | None
    last_handshake_at: datetime.datetime | None
    last_handshake_kind: None | str
    last_received_at: datetime.datetime | None
    last_rejected_at: datetime.datetime | None
    last_rejected_reason: None | str
    rejected: SourceActivityRejected
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        handshakes = self.handshakes

        last_accepted_at: None | str
        if isinstance(self.last_accepted_at, datetime.datetime):
            last_accepted_at = self.last_accepted_at.isoformat()
        else:
            last_accepted_at = self.last_accepted_at

        last_handshake_at: None | str
        if isinstance(self.last_handshake_at, datetime.datetime):
            last_handshake_at = self.last_handshake_at.isoformat()
        else:
            last_handshake_at = self.last_handshake_at

        last_handshake_kind: None | str
        last_handshake_kind = self.last_handshake_kind

        last_received_at: None | str
        if isinstance(self.last_received_at, datetime.datetime):
            last_received_at = self.last_received_at.isoformat()
        else:
            last_received_at = self.last_received_at

        last_rejected_at: None | str
        if isinstance(self.last_rejected_at, datetime.datetime):
            last_rejected_at = self.last_rejected_at.isoformat()
        else:
            last_rejected_at = self.last_rejected_at

        last_rejected_reason: None | str
        last_rejected_reason = self.last_rejected_reason

        rejected = self.rejected.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "handshakes": handshakes,
                "last_accepted_at": last_accepted_at,
                "last_handshake_at": last_handshake_at,
                "last_handshake_kind": last_handshake_kind,
                "last_received_at": last_received_at,
                "last_rejected_at": last_rejected_at,
                "last_rejected_reason": last_rejected_reason,
                "rejected": rejected,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.source_activity_rejected import SourceActivityRejected  # noqa: PLC0415

        d = dict(src_dict)
        handshakes = d.pop("handshakes")

        def _parse_last_accepted_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_accepted_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_accepted_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_accepted_at = _parse_last_accepted_at(d.pop("last_accepted_at"))

        def _parse_last_handshake_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_handshake_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_handshake_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_handshake_at = _parse_last_handshake_at(d.pop("last_handshake_at"))

        def _parse_last_handshake_kind(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_handshake_kind = _parse_last_handshake_kind(d.pop("last_handshake_kind"))

        def _parse_last_received_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_received_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_received_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_received_at = _parse_last_received_at(d.pop("last_received_at"))

        def _parse_last_rejected_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_rejected_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_rejected_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_rejected_at = _parse_last_rejected_at(d.pop("last_rejected_at"))

        def _parse_last_rejected_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_rejected_reason = _parse_last_rejected_reason(d.pop("last_rejected_reason"))

        rejected = SourceActivityRejected.from_dict(d.pop("rejected"))

        source_activity = cls(
            handshakes=handshakes,
            last_accepted_at=last_accepted_at,
            last_handshake_at=last_handshake_at,
            last_handshake_kind=last_handshake_kind,
            last_received_at=last_received_at,
            last_rejected_at=last_rejected_at,
            last_rejected_reason=last_rejected_reason,
            rejected=rejected,
        )

        source_activity.additional_properties = d
        return source_activity

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
