from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="OAuth2ClientCredentials")


@_attrs_define
class OAuth2ClientCredentials:
    """OAuth2 client credentials (decision 0067): a token from `token_url` (fetched through
    the SSRF guard, the client authenticating with HTTP Basic) is sent as `Authorization:
    Bearer`. The client secret is sealed at rest and never shown again.

        Attributes:
            client_id (str):
            client_secret (str):
            token_url (str):
            type_ (Literal['oauth2_client_credentials']):
            audience (None | str | Unset):
            scope (None | str | Unset):
    """

    client_id: str
    client_secret: str
    token_url: str
    type_: Literal["oauth2_client_credentials"]
    audience: None | str | Unset = UNSET
    scope: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        client_secret = self.client_secret

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

        field_dict.update(
            {
                "client_id": client_id,
                "client_secret": client_secret,
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

        client_secret = d.pop("client_secret")

        token_url = d.pop("token_url")

        type_ = cast(Literal["oauth2_client_credentials"], d.pop("type"))
        if type_ != "oauth2_client_credentials":
            raise ValueError(f"type must match const 'oauth2_client_credentials', got '{type_}'")

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

        o_auth_2_client_credentials = cls(
            client_id=client_id,
            client_secret=client_secret,
            token_url=token_url,
            type_=type_,
            audience=audience,
            scope=scope,
        )

        return o_auth_2_client_credentials
