from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.endpoint_deleted_signing import EndpointDeletedSigning, check_endpoint_deleted_signing
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_deleted_content_filter_type_0 import EndpointDeletedContentFilterType0
    from ..models.endpoint_deleted_destination import EndpointDeletedDestination
    from ..models.endpoint_deleted_headers import EndpointDeletedHeaders
    from ..models.endpoint_deleted_input_transformer_type_0 import EndpointDeletedInputTransformerType0
    from ..models.o_auth_2_shown import OAuth2Shown
    from ..models.ordering import Ordering
    from ..models.tls_shown import TlsShown


T = TypeVar("T", bound="EndpointDeleted")


@_attrs_define
class EndpointDeleted:
    """A deleted endpoint: disabled for good, its signing secrets wiped; its deliveries stay
    readable.

        Attributes:
            created_at (datetime.datetime):
            deleted_at (datetime.datetime):
            description (str):
            disabled_reason (None | str):
            enabled (bool):
            event_types (list[str]):
            headers (EndpointDeletedHeaders):
            id (str):
            max_concurrency (int):
            rate_limit_per_second (float | None):
            retry_on_4xx (bool):
            tenant_id (str):
            url (str):
            auth (None | OAuth2Shown | Unset):
            content_filter (EndpointDeletedContentFilterType0 | None | Unset):
            destination (EndpointDeletedDestination | Unset):
            external_id (None | str | Unset): The ExternalId the customer's role must require (AWS kinds)
            failing_since (datetime.datetime | None | Unset):
            input_transformer (EndpointDeletedInputTransformerType0 | None | Unset):
            kind (str | Unset):  Default: 'https'.
            ordering (None | Ordering | Unset):
            public_keys (list[str] | Unset): Ed25519 signing: the `whpk_` public keys that verify `v1a` signatures, newest
                first (two during a rotation's overlap).
            role_arn (None | str | Unset):
            signing (EndpointDeletedSigning | Unset):  Default: 'hmac'.
            tls (None | TlsShown | Unset):
    """

    created_at: datetime.datetime
    deleted_at: datetime.datetime
    description: str
    disabled_reason: None | str
    enabled: bool
    event_types: list[str]
    headers: EndpointDeletedHeaders
    id: str
    max_concurrency: int
    rate_limit_per_second: float | None
    retry_on_4xx: bool
    tenant_id: str
    url: str
    auth: None | OAuth2Shown | Unset = UNSET
    content_filter: EndpointDeletedContentFilterType0 | None | Unset = UNSET
    destination: EndpointDeletedDestination | Unset = UNSET
    external_id: None | str | Unset = UNSET
    failing_since: datetime.datetime | None | Unset = UNSET
    input_transformer: EndpointDeletedInputTransformerType0 | None | Unset = UNSET
    kind: str | Unset = "https"
    ordering: None | Ordering | Unset = UNSET
    public_keys: list[str] | Unset = UNSET
    role_arn: None | str | Unset = UNSET
    signing: EndpointDeletedSigning | Unset = "hmac"
    tls: None | TlsShown | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_deleted_content_filter_type_0 import EndpointDeletedContentFilterType0  # noqa: PLC0415
        from ..models.endpoint_deleted_input_transformer_type_0 import EndpointDeletedInputTransformerType0  # noqa: PLC0415
        from ..models.o_auth_2_shown import OAuth2Shown  # noqa: PLC0415
        from ..models.ordering import Ordering  # noqa: PLC0415
        from ..models.tls_shown import TlsShown  # noqa: PLC0415

        created_at = self.created_at.isoformat()

        deleted_at = self.deleted_at.isoformat()

        description = self.description

        disabled_reason: None | str
        disabled_reason = self.disabled_reason

        enabled = self.enabled

        event_types = self.event_types

        headers = self.headers.to_dict()

        id = self.id

        max_concurrency = self.max_concurrency

        rate_limit_per_second: float | None
        rate_limit_per_second = self.rate_limit_per_second

        retry_on_4xx = self.retry_on_4xx

        tenant_id = self.tenant_id

        url = self.url

        auth: dict[str, Any] | None | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, OAuth2Shown):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        content_filter: dict[str, Any] | None | Unset
        if isinstance(self.content_filter, Unset):
            content_filter = UNSET
        elif isinstance(self.content_filter, EndpointDeletedContentFilterType0):
            content_filter = self.content_filter.to_dict()
        else:
            content_filter = self.content_filter

        destination: dict[str, Any] | Unset = UNSET
        if not isinstance(self.destination, Unset):
            destination = self.destination.to_dict()

        external_id: None | str | Unset
        if isinstance(self.external_id, Unset):
            external_id = UNSET
        else:
            external_id = self.external_id

        failing_since: None | str | Unset
        if isinstance(self.failing_since, Unset):
            failing_since = UNSET
        elif isinstance(self.failing_since, datetime.datetime):
            failing_since = self.failing_since.isoformat()
        else:
            failing_since = self.failing_since

        input_transformer: dict[str, Any] | None | Unset
        if isinstance(self.input_transformer, Unset):
            input_transformer = UNSET
        elif isinstance(self.input_transformer, EndpointDeletedInputTransformerType0):
            input_transformer = self.input_transformer.to_dict()
        else:
            input_transformer = self.input_transformer

        kind = self.kind

        ordering: dict[str, Any] | None | Unset
        if isinstance(self.ordering, Unset):
            ordering = UNSET
        elif isinstance(self.ordering, Ordering):
            ordering = self.ordering.to_dict()
        else:
            ordering = self.ordering

        public_keys: list[str] | Unset = UNSET
        if not isinstance(self.public_keys, Unset):
            public_keys = self.public_keys

        role_arn: None | str | Unset
        if isinstance(self.role_arn, Unset):
            role_arn = UNSET
        else:
            role_arn = self.role_arn

        signing: str | Unset = UNSET
        if not isinstance(self.signing, Unset):
            signing = self.signing

        tls: dict[str, Any] | None | Unset
        if isinstance(self.tls, Unset):
            tls = UNSET
        elif isinstance(self.tls, TlsShown):
            tls = self.tls.to_dict()
        else:
            tls = self.tls

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "deleted_at": deleted_at,
                "description": description,
                "disabled_reason": disabled_reason,
                "enabled": enabled,
                "event_types": event_types,
                "headers": headers,
                "id": id,
                "max_concurrency": max_concurrency,
                "rate_limit_per_second": rate_limit_per_second,
                "retry_on_4xx": retry_on_4xx,
                "tenant_id": tenant_id,
                "url": url,
            }
        )
        if auth is not UNSET:
            field_dict["auth"] = auth
        if content_filter is not UNSET:
            field_dict["content_filter"] = content_filter
        if destination is not UNSET:
            field_dict["destination"] = destination
        if external_id is not UNSET:
            field_dict["external_id"] = external_id
        if failing_since is not UNSET:
            field_dict["failing_since"] = failing_since
        if input_transformer is not UNSET:
            field_dict["input_transformer"] = input_transformer
        if kind is not UNSET:
            field_dict["kind"] = kind
        if ordering is not UNSET:
            field_dict["ordering"] = ordering
        if public_keys is not UNSET:
            field_dict["public_keys"] = public_keys
        if role_arn is not UNSET:
            field_dict["role_arn"] = role_arn
        if signing is not UNSET:
            field_dict["signing"] = signing
        if tls is not UNSET:
            field_dict["tls"] = tls

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_deleted_content_filter_type_0 import EndpointDeletedContentFilterType0  # noqa: PLC0415
        from ..models.endpoint_deleted_destination import EndpointDeletedDestination  # noqa: PLC0415
        from ..models.endpoint_deleted_headers import EndpointDeletedHeaders  # noqa: PLC0415
        from ..models.endpoint_deleted_input_transformer_type_0 import EndpointDeletedInputTransformerType0  # noqa: PLC0415
        from ..models.o_auth_2_shown import OAuth2Shown  # noqa: PLC0415
        from ..models.ordering import Ordering  # noqa: PLC0415
        from ..models.tls_shown import TlsShown  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        deleted_at = datetime.datetime.fromisoformat(d.pop("deleted_at"))

        description = d.pop("description")

        def _parse_disabled_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        disabled_reason = _parse_disabled_reason(d.pop("disabled_reason"))

        enabled = d.pop("enabled")

        event_types = cast(list[str], d.pop("event_types"))

        headers = EndpointDeletedHeaders.from_dict(d.pop("headers"))

        id = d.pop("id")

        max_concurrency = d.pop("max_concurrency")

        def _parse_rate_limit_per_second(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        rate_limit_per_second = _parse_rate_limit_per_second(d.pop("rate_limit_per_second"))

        retry_on_4xx = d.pop("retry_on_4xx")

        tenant_id = d.pop("tenant_id")

        url = d.pop("url")

        def _parse_auth(data: object) -> None | OAuth2Shown | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_0 = OAuth2Shown.from_dict(data)

                return auth_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OAuth2Shown | Unset, data)

        auth = _parse_auth(d.pop("auth", UNSET))

        def _parse_content_filter(data: object) -> EndpointDeletedContentFilterType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                content_filter_type_0 = EndpointDeletedContentFilterType0.from_dict(data)

                return content_filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointDeletedContentFilterType0 | None | Unset, data)

        content_filter = _parse_content_filter(d.pop("content_filter", UNSET))

        _destination = d.pop("destination", UNSET)
        destination: EndpointDeletedDestination | Unset
        if isinstance(_destination, Unset):
            destination = UNSET
        else:
            destination = EndpointDeletedDestination.from_dict(_destination)

        def _parse_external_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        external_id = _parse_external_id(d.pop("external_id", UNSET))

        def _parse_failing_since(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                failing_since_type_0 = datetime.datetime.fromisoformat(data)

                return failing_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        failing_since = _parse_failing_since(d.pop("failing_since", UNSET))

        def _parse_input_transformer(data: object) -> EndpointDeletedInputTransformerType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_transformer_type_0 = EndpointDeletedInputTransformerType0.from_dict(data)

                return input_transformer_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointDeletedInputTransformerType0 | None | Unset, data)

        input_transformer = _parse_input_transformer(d.pop("input_transformer", UNSET))

        kind = d.pop("kind", UNSET)

        def _parse_ordering(data: object) -> None | Ordering | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                ordering_type_0 = Ordering.from_dict(data)

                return ordering_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Ordering | Unset, data)

        ordering = _parse_ordering(d.pop("ordering", UNSET))

        public_keys = cast(list[str], d.pop("public_keys", UNSET))

        def _parse_role_arn(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        role_arn = _parse_role_arn(d.pop("role_arn", UNSET))

        _signing = d.pop("signing", UNSET)
        signing: EndpointDeletedSigning | Unset
        if isinstance(_signing, Unset):
            signing = UNSET
        else:
            signing = check_endpoint_deleted_signing(_signing)

        def _parse_tls(data: object) -> None | TlsShown | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tls_type_0 = TlsShown.from_dict(data)

                return tls_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TlsShown | Unset, data)

        tls = _parse_tls(d.pop("tls", UNSET))

        endpoint_deleted = cls(
            created_at=created_at,
            deleted_at=deleted_at,
            description=description,
            disabled_reason=disabled_reason,
            enabled=enabled,
            event_types=event_types,
            headers=headers,
            id=id,
            max_concurrency=max_concurrency,
            rate_limit_per_second=rate_limit_per_second,
            retry_on_4xx=retry_on_4xx,
            tenant_id=tenant_id,
            url=url,
            auth=auth,
            content_filter=content_filter,
            destination=destination,
            external_id=external_id,
            failing_since=failing_since,
            input_transformer=input_transformer,
            kind=kind,
            ordering=ordering,
            public_keys=public_keys,
            role_arn=role_arn,
            signing=signing,
            tls=tls,
        )

        endpoint_deleted.additional_properties = d
        return endpoint_deleted

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
