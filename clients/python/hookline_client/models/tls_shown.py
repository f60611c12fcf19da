from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="TlsShown")


@_attrs_define
class TlsShown:
    """An endpoint's TLS material as the API shows it: never the key.

    Attributes:
        has_ca_bundle (bool):
        has_client_certificate (bool):
        certificate_expires_at (datetime.datetime | None | Unset): The client certificate's expiry;
            `endpoint.certificate_expiring` is published 14 days before.
        certificate_subject (None | str | Unset):
    """

    has_ca_bundle: bool
    has_client_certificate: bool
    certificate_expires_at: datetime.datetime | None | Unset = UNSET
    certificate_subject: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        has_ca_bundle = self.has_ca_bundle

        has_client_certificate = self.has_client_certificate

        certificate_expires_at: None | str | Unset
        if isinstance(self.certificate_expires_at, Unset):
            certificate_expires_at = UNSET
        elif isinstance(self.certificate_expires_at, datetime.datetime):
            certificate_expires_at = self.certificate_expires_at.isoformat()
        else:
            certificate_expires_at = self.certificate_expires_at

        certificate_subject: None | str | Unset
        if isinstance(self.certificate_subject, Unset):
            certificate_subject = UNSET
        else:
            certificate_subject = self.certificate_subject

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "has_ca_bundle": has_ca_bundle,
                "has_client_certificate": has_client_certificate,
            }
        )
        if certificate_expires_at is not UNSET:
            field_dict["certificate_expires_at"] = certificate_expires_at
        if certificate_subject is not UNSET:
            field_dict["certificate_subject"] = certificate_subject

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        has_ca_bundle = d.pop("has_ca_bundle")

        has_client_certificate = d.pop("has_client_certificate")

        def _parse_certificate_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                certificate_expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return certificate_expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        certificate_expires_at = _parse_certificate_expires_at(d.pop("certificate_expires_at", UNSET))

        def _parse_certificate_subject(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        certificate_subject = _parse_certificate_subject(d.pop("certificate_subject", UNSET))

        tls_shown = cls(
            has_ca_bundle=has_ca_bundle,
            has_client_certificate=has_client_certificate,
            certificate_expires_at=certificate_expires_at,
            certificate_subject=certificate_subject,
        )

        tls_shown.additional_properties = d
        return tls_shown

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
