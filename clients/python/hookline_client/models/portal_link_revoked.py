from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PortalLinkRevoked")


@_attrs_define
class PortalLinkRevoked:
    """A revoked link, and how many sessions it opened that ended.

    Attributes:
        id (str):
        revoked (bool):
        sessions_ended (int):
    """

    id: str
    revoked: bool
    sessions_ended: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        revoked = self.revoked

        sessions_ended = self.sessions_ended

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "revoked": revoked,
                "sessions_ended": sessions_ended,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        revoked = d.pop("revoked")

        sessions_ended = d.pop("sessions_ended")

        portal_link_revoked = cls(
            id=id,
            revoked=revoked,
            sessions_ended=sessions_ended,
        )

        portal_link_revoked.additional_properties = d
        return portal_link_revoked

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
