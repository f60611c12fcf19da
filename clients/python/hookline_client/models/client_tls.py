from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ClientTls")


@_attrs_define
class ClientTls:
    """Mutual TLS (decision 0067): a client certificate and its key (PEM), a private CA bundle
    (PEM) the endpoint's server certificate must chain to, or both. The key is sealed at rest
    and never shown again.

        Attributes:
            ca_bundle (None | str | Unset):
            client_certificate (None | str | Unset):
            client_key (None | str | Unset):
    """

    ca_bundle: None | str | Unset = UNSET
    client_certificate: None | str | Unset = UNSET
    client_key: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        ca_bundle: None | str | Unset
        if isinstance(self.ca_bundle, Unset):
            ca_bundle = UNSET
        else:
            ca_bundle = self.ca_bundle

        client_certificate: None | str | Unset
        if isinstance(self.client_certificate, Unset):
            client_certificate = UNSET
        else:
            client_certificate = self.client_certificate

        client_key: None | str | Unset
        if isinstance(self.client_key, Unset):
            client_key = UNSET
        else:
            client_key = self.client_key

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if ca_bundle is not UNSET:
            field_dict["ca_bundle"] = ca_bundle
        if client_certificate is not UNSET:
            field_dict["client_certificate"] = client_certificate
        if client_key is not UNSET:
            field_dict["client_key"] = client_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_ca_bundle(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        ca_bundle = _parse_ca_bundle(d.pop("ca_bundle", UNSET))

        def _parse_client_certificate(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_certificate = _parse_client_certificate(d.pop("client_certificate", UNSET))

        def _parse_client_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_key = _parse_client_key(d.pop("client_key", UNSET))

        client_tls = cls(
            ca_bundle=ca_bundle,
            client_certificate=client_certificate,
            client_key=client_key,
        )

        return client_tls
