from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.endpoint_create_kind import EndpointCreateKind, check_endpoint_create_kind
from ..models.endpoint_create_signing import EndpointCreateSigning, check_endpoint_create_signing
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.client_tls import ClientTls
    from ..models.endpoint_create_content_filter_type_0 import EndpointCreateContentFilterType0
    from ..models.endpoint_create_destination import EndpointCreateDestination
    from ..models.endpoint_create_headers import EndpointCreateHeaders
    from ..models.endpoint_create_input_transformer_type_0 import EndpointCreateInputTransformerType0
    from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials
    from ..models.ordering import Ordering


T = TypeVar("T", bound="EndpointCreate")


@_attrs_define
class EndpointCreate:
    """A new endpoint: an https URL, which must resolve to public addresses, or (`kind`) a
    target in the customer's AWS account reached through `role_arn` (decision 0046).

        Attributes:
            auth (None | OAuth2ClientCredentials | Unset):
            content_filter (EndpointCreateContentFilterType0 | None | Unset): An EventBridge event pattern over {type,
                tenant_id, source_id, payload}; events it does not match get no delivery (docs/decisions/0044).
            description (str | Unset):  Default: ''.
            destination (EndpointCreateDestination | Unset): Options of the kind: message_group_path (FIFO sqs, sns),
                offload_bucket and offload_prefix (sqs, sns), source (eventbridge), partition_key_path (kinesis), prefix (s3).
            event_types (list[str] | Unset):
            headers (EndpointCreateHeaders | Unset):
            input_transformer (EndpointCreateInputTransformerType0 | None | Unset): An EventBridge input transformer,
                {InputPathsMap, InputTemplate}, over the same document: what is sent (and signed) instead of the payload
                (decision 0045).
            kind (EndpointCreateKind | Unset):  Default: 'https'.
            max_concurrency (int | Unset):  Default: 5.
            ordering (None | Ordering | Unset):
            rate_limit_per_second (float | None | Unset):
            retry_on_4xx (bool | Unset):  Default: False.
            role_arn (None | str | Unset):
            signing (EndpointCreateSigning | Unset): Standard Webhooks `v1` HMAC signatures under a `whsec_` secret
                (returned once), or `v1a` Ed25519 signatures under a key pair whose public key is returned. Default: 'hmac'.
            target (None | str | Unset):
            tenant_id (None | str | Unset):
            tls (ClientTls | None | Unset):
            url (None | str | Unset):
    """

    auth: None | OAuth2ClientCredentials | Unset = UNSET
    content_filter: EndpointCreateContentFilterType0 | None | Unset = UNSET
    description: str | Unset = ""
    destination: EndpointCreateDestination | Unset = UNSET
    event_types: list[str] | Unset = UNSET
    headers: EndpointCreateHeaders | Unset = UNSET
    input_transformer: EndpointCreateInputTransformerType0 | None | Unset = UNSET
    kind: EndpointCreateKind | Unset = "https"
    max_concurrency: int | Unset = 5
    ordering: None | Ordering | Unset = UNSET
    rate_limit_per_second: float | None | Unset = UNSET
    retry_on_4xx: bool | Unset = False
    role_arn: None | str | Unset = UNSET
    signing: EndpointCreateSigning | Unset = "hmac"
    target: None | str | Unset = UNSET
    tenant_id: None | str | Unset = UNSET
    tls: ClientTls | None | Unset = UNSET
    url: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.client_tls import ClientTls  # noqa: PLC0415
        from ..models.endpoint_create_content_filter_type_0 import EndpointCreateContentFilterType0  # noqa: PLC0415
        from ..models.endpoint_create_input_transformer_type_0 import EndpointCreateInputTransformerType0  # noqa: PLC0415
        from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials  # noqa: PLC0415
        from ..models.ordering import Ordering  # noqa: PLC0415

        auth: dict[str, Any] | None | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, OAuth2ClientCredentials):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        content_filter: dict[str, Any] | None | Unset
        if isinstance(self.content_filter, Unset):
            content_filter = UNSET
        elif isinstance(self.content_filter, EndpointCreateContentFilterType0):
            content_filter = self.content_filter.to_dict()
        else:
            content_filter = self.content_filter

        description = self.description

        destination: dict[str, Any] | Unset = UNSET
        if not isinstance(self.destination, Unset):
            destination = self.destination.to_dict()

        event_types: list[str] | Unset = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = self.event_types

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        input_transformer: dict[str, Any] | None | Unset
        if isinstance(self.input_transformer, Unset):
            input_transformer = UNSET
        elif isinstance(self.input_transformer, EndpointCreateInputTransformerType0):
            input_transformer = self.input_transformer.to_dict()
        else:
            input_transformer = self.input_transformer

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind

        max_concurrency = self.max_concurrency

        ordering: dict[str, Any] | None | Unset
        if isinstance(self.ordering, Unset):
            ordering = UNSET
        elif isinstance(self.ordering, Ordering):
            ordering = self.ordering.to_dict()
        else:
            ordering = self.ordering

        rate_limit_per_second: float | None | Unset
        if isinstance(self.rate_limit_per_second, Unset):
            rate_limit_per_second = UNSET
        else:
            rate_limit_per_second = self.rate_limit_per_second

        retry_on_4xx = self.retry_on_4xx

        role_arn: None | str | Unset
        if isinstance(self.role_arn, Unset):
            role_arn = UNSET
        else:
            role_arn = self.role_arn

        signing: str | Unset = UNSET
        if not isinstance(self.signing, Unset):
            signing = self.signing

        target: None | str | Unset
        if isinstance(self.target, Unset):
            target = UNSET
        else:
            target = self.target

        tenant_id: None | str | Unset
        if isinstance(self.tenant_id, Unset):
            tenant_id = UNSET
        else:
            tenant_id = self.tenant_id

        tls: dict[str, Any] | None | Unset
        if isinstance(self.tls, Unset):
            tls = UNSET
        elif isinstance(self.tls, ClientTls):
            tls = self.tls.to_dict()
        else:
            tls = self.tls

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if auth is not UNSET:
            field_dict["auth"] = auth
        if content_filter is not UNSET:
            field_dict["content_filter"] = content_filter
        if description is not UNSET:
            field_dict["description"] = description
        if destination is not UNSET:
            field_dict["destination"] = destination
        if event_types is not UNSET:
            field_dict["event_types"] = event_types
        if headers is not UNSET:
            field_dict["headers"] = headers
        if input_transformer is not UNSET:
            field_dict["input_transformer"] = input_transformer
        if kind is not UNSET:
            field_dict["kind"] = kind
        if max_concurrency is not UNSET:
            field_dict["max_concurrency"] = max_concurrency
        if ordering is not UNSET:
            field_dict["ordering"] = ordering
        if rate_limit_per_second is not UNSET:
            field_dict["rate_limit_per_second"] = rate_limit_per_second
        if retry_on_4xx is not UNSET:
            field_dict["retry_on_4xx"] = retry_on_4xx
        if role_arn is not UNSET:
            field_dict["role_arn"] = role_arn
        if signing is not UNSET:
            field_dict["signing"] = signing
        if target is not UNSET:
            field_dict["target"] = target
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id
        if tls is not UNSET:
            field_dict["tls"] = tls
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.client_tls import ClientTls  # noqa: PLC0415
        from ..models.endpoint_create_content_filter_type_0 import EndpointCreateContentFilterType0  # noqa: PLC0415
        from ..models.endpoint_create_destination import EndpointCreateDestination  # noqa: PLC0415
        from ..models.endpoint_create_headers import EndpointCreateHeaders  # noqa: PLC0415
        from ..models.endpoint_create_input_transformer_type_0 import EndpointCreateInputTransformerType0  # noqa: PLC0415
        from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials  # noqa: PLC0415
        from ..models.ordering import Ordering  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_auth(data: object) -> None | OAuth2ClientCredentials | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_0 = OAuth2ClientCredentials.from_dict(data)

                return auth_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OAuth2ClientCredentials | Unset, data)

        auth = _parse_auth(d.pop("auth", UNSET))

        def _parse_content_filter(data: object) -> EndpointCreateContentFilterType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                content_filter_type_0 = EndpointCreateContentFilterType0.from_dict(data)

                return content_filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointCreateContentFilterType0 | None | Unset, data)

        content_filter = _parse_content_filter(d.pop("content_filter", UNSET))

        description = d.pop("description", UNSET)

        _destination = d.pop("destination", UNSET)
        destination: EndpointCreateDestination | Unset
        if isinstance(_destination, Unset):
            destination = UNSET
        else:
            destination = EndpointCreateDestination.from_dict(_destination)

        event_types = cast(list[str], d.pop("event_types", UNSET))

        _headers = d.pop("headers", UNSET)
        headers: EndpointCreateHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = EndpointCreateHeaders.from_dict(_headers)

        def _parse_input_transformer(data: object) -> EndpointCreateInputTransformerType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_transformer_type_0 = EndpointCreateInputTransformerType0.from_dict(data)

                return input_transformer_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointCreateInputTransformerType0 | None | Unset, data)

        input_transformer = _parse_input_transformer(d.pop("input_transformer", UNSET))

        _kind = d.pop("kind", UNSET)
        kind: EndpointCreateKind | Unset
        if isinstance(_kind, Unset):
            kind = UNSET
        else:
            kind = check_endpoint_create_kind(_kind)

        max_concurrency = d.pop("max_concurrency", UNSET)

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

        def _parse_rate_limit_per_second(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        rate_limit_per_second = _parse_rate_limit_per_second(d.pop("rate_limit_per_second", UNSET))

        retry_on_4xx = d.pop("retry_on_4xx", UNSET)

        def _parse_role_arn(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        role_arn = _parse_role_arn(d.pop("role_arn", UNSET))

        _signing = d.pop("signing", UNSET)
        signing: EndpointCreateSigning | Unset
        if isinstance(_signing, Unset):
            signing = UNSET
        else:
            signing = check_endpoint_create_signing(_signing)

        def _parse_target(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        target = _parse_target(d.pop("target", UNSET))

        def _parse_tenant_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tenant_id = _parse_tenant_id(d.pop("tenant_id", UNSET))

        def _parse_tls(data: object) -> ClientTls | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tls_type_0 = ClientTls.from_dict(data)

                return tls_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ClientTls | None | Unset, data)

        tls = _parse_tls(d.pop("tls", UNSET))

        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        url = _parse_url(d.pop("url", UNSET))

        endpoint_create = cls(
            auth=auth,
            content_filter=content_filter,
            description=description,
            destination=destination,
            event_types=event_types,
            headers=headers,
            input_transformer=input_transformer,
            kind=kind,
            max_concurrency=max_concurrency,
            ordering=ordering,
            rate_limit_per_second=rate_limit_per_second,
            retry_on_4xx=retry_on_4xx,
            role_arn=role_arn,
            signing=signing,
            target=target,
            tenant_id=tenant_id,
            tls=tls,
            url=url,
        )

        return endpoint_create
