from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PortalLinkState")


@_attrs_define
class PortalLinkState:
    """A portal link as recorded (its token is never kept).

    Attributes:
        created_at (datetime.datetime):
        created_by (str):
        expires_at (datetime.datetime):
        id (str):
        live_sessions (int):
        revoked_at (datetime.datetime | None):
        tenant_id (str):
        used_at (datetime.datetime | None):
    """

    created_at: datetime.datetime
    created_by: str
    expires_at: datetime.datetime
    id: str
    live_sessions: int
    revoked_at: datetime.datetime | None
    tenant_id: str
    used_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        created_by = self.created_by

        expires_at = self.expires_at.isoformat()

        id = self.id

        live_sessions = self.live_sessions

        revoked_at: None | str
        if isinstance(self.revoked_at, datetime.datetime):
            revoked_at = self.revoked_at.isoformat()
        else:
            revoked_at = self.revoked_at

        tenant_id = self.tenant_id

        used_at: None | str
        if isinstance(self.used_at, datetime.datetime):
            used_at = self.used_at.isoformat()
        else:
            used_at = self.used_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "created_by": created_by,
                "expires_at": expires_at,
                "id": id,
                "live_sessions": live_sessions,
                "revoked_at": revoked_at,
                "tenant_id": tenant_id,
                "used_at": used_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        id = d.pop("id")

        live_sessions = d.pop("live_sessions")

        def _parse_revoked_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                revoked_at_type_0 = datetime.datetime.fromisoformat(data)

                return revoked_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        revoked_at = _parse_revoked_at(d.pop("revoked_at"))

        tenant_id = d.pop("tenant_id")

        def _parse_used_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                used_at_type_0 = datetime.datetime.fromisoformat(data)

                return used_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        used_at = _parse_used_at(d.pop("used_at"))

        portal_link_state = cls(
            created_at=created_at,
            created_by=created_by,
            expires_at=expires_at,
            id=id,
            live_sessions=live_sessions,
            revoked_at=revoked_at,
            tenant_id=tenant_id,
            used_at=used_at,
        )

        portal_link_state.additional_properties = d
        return portal_link_state

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
