from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="OAuth2Shown")


@_attrs_define
class OAuth2Shown:
    """An endpoint's OAuth2 client as the API shows it: never the client secret.

    Attributes:
        client_id (str):
        has_client_secret (bool):
        token_url (str):
        type_ (str):
        audience (None | str | Unset):
        scope (None | str | Unset):
    """

    client_id: str
    has_client_secret: bool
    token_url: str
    type_: str
    audience: None | str | Unset = UNSET
    scope: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        has_client_secret = self.has_client_secret

        token_url = self.token_url

        type_ = self.type_

        audience: None | str | Unset
        if isinstance(self.audience, Unset):
            audience = UNSET
        else:
            audience = self.audience

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        else:
            scope = self.scope

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "client_id": client_id,
                "has_client_secret": has_client_secret,
                "token_url": token_url,
                "type": type_,
            }
        )
        if audience is not UNSET:
            field_dict["audience"] = audience
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        client_id = d.pop("client_id")

        has_client_secret = d.pop("has_client_secret")

        token_url = d.pop("token_url")

        type_ = d.pop("type")

        def _parse_audience(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        audience = _parse_audience(d.pop("audience", UNSET))

        def _parse_scope(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))

        o_auth_2_shown = cls(
            client_id=client_id,
            has_client_secret=has_client_secret,
            token_url=token_url,
            type_=type_,
            audience=audience,
            scope=scope,
        )

        o_auth_2_shown.additional_properties = d
        return o_auth_2_shown

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
