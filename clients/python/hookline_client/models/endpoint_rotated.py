from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointRotated")


@_attrs_define
class EndpointRotated:
    """The new signing secret, shown this once (or, for Ed25519 signing, the new public key);
    earlier ones sign until `previous_secrets_expire_at`.

        Attributes:
            id (str):
            previous_secrets_expire_at (datetime.datetime | None):
            secret (None | str):
            public_key (None | str | Unset):
    """

    id: str
    previous_secrets_expire_at: datetime.datetime | None
    secret: None | str
    public_key: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        previous_secrets_expire_at: None | str
        if isinstance(self.previous_secrets_expire_at, datetime.datetime):
            previous_secrets_expire_at = self.previous_secrets_expire_at.isoformat()
        else:
            previous_secrets_expire_at = self.previous_secrets_expire_at

        secret: None | str
        secret = self.secret

        public_key: None | str | Unset
        if isinstance(self.public_key, Unset):
            public_key = UNSET
        else:
            public_key = self.public_key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "previous_secrets_expire_at": previous_secrets_expire_at,
                "secret": secret,
            }
        )
        if public_key is not UNSET:
            field_dict["public_key"] = public_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        def _parse_previous_secrets_expire_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                previous_secrets_expire_at_type_0 = datetime.datetime.fromisoformat(data)

                return previous_secrets_expire_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        previous_secrets_expire_at = _parse_previous_secrets_expire_at(d.pop("previous_secrets_expire_at"))

        def _parse_secret(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        secret = _parse_secret(d.pop("secret"))

        def _parse_public_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        public_key = _parse_public_key(d.pop("public_key", UNSET))

        endpoint_rotated = cls(
            id=id,
            previous_secrets_expire_at=previous_secrets_expire_at,
            secret=secret,
            public_key=public_key,
        )

        endpoint_rotated.additional_properties = d
        return endpoint_rotated

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
