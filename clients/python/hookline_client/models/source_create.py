from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.source_create_options import SourceCreateOptions


T = TypeVar("T", bound="SourceCreate")


@_attrs_define
class SourceCreate:
    """A new inbound source. Without `secret`, Hookline generates one (returned once).

    Attributes:
        scheme (str):
        name (None | str | Unset):
        options (SourceCreateOptions | Unset): Scheme options (`verify_token`, `public_url`, the hmac scheme's), and
            `catchup` (provider catch-up). An inline `catchup.api_key` is stored encrypted and never shown again, not even
            in this answer: every answer carries `"<redacted>"` in its place. `catchup.api_base` and
            `catchup.api_key_secret_arn` are an operator's to set (403 for a tenant).
        secret (None | str | Unset): The verification material: a shared secret, or the provider's public key for
            Ed25519 (Discord) and ECDSA (SendGrid) schemes; checked against the scheme.
        secrets (list[str] | None | Unset): Two secrets during a rotation.
        tenant_id (None | str | Unset):
        tolerance_seconds (int | Unset):  Default: 300.
    """

    scheme: str
    name: None | str | Unset = UNSET
    options: SourceCreateOptions | Unset = UNSET
    secret: None | str | Unset = UNSET
    secrets: list[str] | None | Unset = UNSET
    tenant_id: None | str | Unset = UNSET
    tolerance_seconds: int | Unset = 300

    def to_dict(self) -> dict[str, Any]:
        scheme = self.scheme

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        options: dict[str, Any] | Unset = UNSET
        if not isinstance(self.options, Unset):
            options = self.options.to_dict()

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret

        secrets: list[str] | None | Unset
        if isinstance(self.secrets, Unset):
            secrets = UNSET
        elif isinstance(self.secrets, list):
            secrets = self.secrets

        else:
            secrets = self.secrets

        tenant_id: None | str | Unset
        if isinstance(self.tenant_id, Unset):
            tenant_id = UNSET
        else:
            tenant_id = self.tenant_id

        tolerance_seconds = self.tolerance_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "scheme": scheme,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name
        if options is not UNSET:
            field_dict["options"] = options
        if secret is not UNSET:
            field_dict["secret"] = secret
        if secrets is not UNSET:
            field_dict["secrets"] = secrets
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id
        if tolerance_seconds is not UNSET:
            field_dict["tolerance_seconds"] = tolerance_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.source_create_options import SourceCreateOptions  # noqa: PLC0415

        d = dict(src_dict)
        scheme = d.pop("scheme")

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        _options = d.pop("options", UNSET)
        options: SourceCreateOptions | Unset
        if isinstance(_options, Unset):
            options = UNSET
        else:
            options = SourceCreateOptions.from_dict(_options)

        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        def _parse_secrets(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                secrets_type_0 = cast(list[str], data)

                return secrets_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        secrets = _parse_secrets(d.pop("secrets", UNSET))

        def _parse_tenant_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tenant_id = _parse_tenant_id(d.pop("tenant_id", UNSET))

        tolerance_seconds = d.pop("tolerance_seconds", UNSET)

        source_create = cls(
            scheme=scheme,
            name=name,
            options=options,
            secret=secret,
            secrets=secrets,
            tenant_id=tenant_id,
            tolerance_seconds=tolerance_seconds,
        )

        return source_create
