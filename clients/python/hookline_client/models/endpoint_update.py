from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.client_tls import ClientTls
    from ..models.endpoint_update_content_filter_type_0 import EndpointUpdateContentFilterType0
    from ..models.endpoint_update_destination_type_0 import EndpointUpdateDestinationType0
    from ..models.endpoint_update_headers_type_0 import EndpointUpdateHeadersType0
    from ..models.endpoint_update_input_transformer_type_0 import EndpointUpdateInputTransformerType0
    from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials
    from ..models.ordering import Ordering


T = TypeVar("T", bound="EndpointUpdate")


@_attrs_define
class EndpointUpdate:
    """The fields to change; absent fields keep their value.

    Attributes:
        auth (None | OAuth2ClientCredentials | Unset): Replaces the whole OAuth2 client, its secret included.
        clear_auth (bool | Unset):  Default: False.
        clear_content_filter (bool | Unset):  Default: False.
        clear_input_transformer (bool | Unset):  Default: False.
        clear_ordering (bool | Unset): Unordered from now on: held deliveries are released. Default: False.
        clear_rate_limit (bool | Unset):  Default: False.
        clear_tls (bool | Unset):  Default: False.
        content_filter (EndpointUpdateContentFilterType0 | None | Unset):
        description (None | str | Unset):
        destination (EndpointUpdateDestinationType0 | None | Unset):
        event_types (list[str] | None | Unset):
        headers (EndpointUpdateHeadersType0 | None | Unset):
        input_transformer (EndpointUpdateInputTransformerType0 | None | Unset):
        max_concurrency (int | None | Unset):
        ordering (None | Ordering | Unset): A new ordering key applies to deliveries made from now on; those already
            made keep their order.
        rate_limit_per_second (float | None | Unset):
        retry_on_4xx (bool | None | Unset):
        role_arn (None | str | Unset):
        tls (ClientTls | None | Unset): Replaces the whole TLS material, its key included.
        url (None | str | Unset):
    """

    auth: None | OAuth2ClientCredentials | Unset = UNSET
    clear_auth: bool | Unset = False
    clear_content_filter: bool | Unset = False
    clear_input_transformer: bool | Unset = False
    clear_ordering: bool | Unset = False
    clear_rate_limit: bool | Unset = False
    clear_tls: bool | Unset = False
    content_filter: EndpointUpdateContentFilterType0 | None | Unset = UNSET
    description: None | str | Unset = UNSET
    destination: EndpointUpdateDestinationType0 | None | Unset = UNSET
    event_types: list[str] | None | Unset = UNSET
    headers: EndpointUpdateHeadersType0 | None | Unset = UNSET
    input_transformer: EndpointUpdateInputTransformerType0 | None | Unset = UNSET
    max_concurrency: int | None | Unset = UNSET
    ordering: None | Ordering | Unset = UNSET
    rate_limit_per_second: float | None | Unset = UNSET
    retry_on_4xx: bool | None | Unset = UNSET
    role_arn: None | str | Unset = UNSET
    tls: ClientTls | None | Unset = UNSET
    url: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.client_tls import ClientTls  # noqa: PLC0415
        from ..models.endpoint_update_content_filter_type_0 import EndpointUpdateContentFilterType0  # noqa: PLC0415
        from ..models.endpoint_update_destination_type_0 import EndpointUpdateDestinationType0  # noqa: PLC0415
        from ..models.endpoint_update_headers_type_0 import EndpointUpdateHeadersType0  # noqa: PLC0415
        from ..models.endpoint_update_input_transformer_type_0 import EndpointUpdateInputTransformerType0  # noqa: PLC0415
        from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials  # noqa: PLC0415
        from ..models.ordering import Ordering  # noqa: PLC0415

        auth: dict[str, Any] | None | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, OAuth2ClientCredentials):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        clear_auth = self.clear_auth

        clear_content_filter = self.clear_content_filter

        clear_input_transformer = self.clear_input_transformer

        clear_ordering = self.clear_ordering

        clear_rate_limit = self.clear_rate_limit

        clear_tls = self.clear_tls

        content_filter: dict[str, Any] | None | Unset
        if isinstance(self.content_filter, Unset):
            content_filter = UNSET
        elif isinstance(self.content_filter, EndpointUpdateContentFilterType0):
            content_filter = self.content_filter.to_dict()
        else:
            content_filter = self.content_filter

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        destination: dict[str, Any] | None | Unset
        if isinstance(self.destination, Unset):
            destination = UNSET
        elif isinstance(self.destination, EndpointUpdateDestinationType0):
            destination = self.destination.to_dict()
        else:
            destination = self.destination

        event_types: list[str] | None | Unset
        if isinstance(self.event_types, Unset):
            event_types = UNSET
        elif isinstance(self.event_types, list):
            event_types = self.event_types

        else:
            event_types = self.event_types

        headers: dict[str, Any] | None | Unset
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, EndpointUpdateHeadersType0):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

        input_transformer: dict[str, Any] | None | Unset
        if isinstance(self.input_transformer, Unset):
            input_transformer = UNSET
        elif isinstance(self.input_transformer, EndpointUpdateInputTransformerType0):
            input_transformer = self.input_transformer.to_dict()
        else:
            input_transformer = self.input_transformer

        max_concurrency: int | None | Unset
        if isinstance(self.max_concurrency, Unset):
            max_concurrency = UNSET
        else:
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

        retry_on_4xx: bool | None | Unset
        if isinstance(self.retry_on_4xx, Unset):
            retry_on_4xx = UNSET
        else:
            retry_on_4xx = self.retry_on_4xx

        role_arn: None | str | Unset
        if isinstance(self.role_arn, Unset):
            role_arn = UNSET
        else:
            role_arn = self.role_arn

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
        if clear_auth is not UNSET:
            field_dict["clear_auth"] = clear_auth
        if clear_content_filter is not UNSET:
            field_dict["clear_content_filter"] = clear_content_filter
        if clear_input_transformer is not UNSET:
            field_dict["clear_input_transformer"] = clear_input_transformer
        if clear_ordering is not UNSET:
            field_dict["clear_ordering"] = clear_ordering
        if clear_rate_limit is not UNSET:
            field_dict["clear_rate_limit"] = clear_rate_limit
        if clear_tls is not UNSET:
            field_dict["clear_tls"] = clear_tls
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
        if tls is not UNSET:
            field_dict["tls"] = tls
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.client_tls import ClientTls  # noqa: PLC0415
        from ..models.endpoint_update_content_filter_type_0 import EndpointUpdateContentFilterType0  # noqa: PLC0415
        from ..models.endpoint_update_destination_type_0 import EndpointUpdateDestinationType0  # noqa: PLC0415
        from ..models.endpoint_update_headers_type_0 import EndpointUpdateHeadersType0  # noqa: PLC0415
        from ..models.endpoint_update_input_transformer_type_0 import EndpointUpdateInputTransformerType0  # noqa: PLC0415
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

        clear_auth = d.pop("clear_auth", UNSET)

        clear_content_filter = d.pop("clear_content_filter", UNSET)

        clear_input_transformer = d.pop("clear_input_transformer", UNSET)

        clear_ordering = d.pop("clear_ordering", UNSET)

        clear_rate_limit = d.pop("clear_rate_limit", UNSET)

        clear_tls = d.pop("clear_tls", UNSET)

        def _parse_content_filter(data: object) -> EndpointUpdateContentFilterType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                content_filter_type_0 = EndpointUpdateContentFilterType0.from_dict(data)

                return content_filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointUpdateContentFilterType0 | None | Unset, data)

        content_filter = _parse_content_filter(d.pop("content_filter", UNSET))

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_destination(data: object) -> EndpointUpdateDestinationType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                destination_type_0 = EndpointUpdateDestinationType0.from_dict(data)

                return destination_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointUpdateDestinationType0 | None | Unset, data)

        destination = _parse_destination(d.pop("destination", UNSET))

        def _parse_event_types(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                event_types_type_0 = cast(list[str], data)

                return event_types_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        event_types = _parse_event_types(d.pop("event_types", UNSET))

        def _parse_headers(data: object) -> EndpointUpdateHeadersType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = EndpointUpdateHeadersType0.from_dict(data)

                return headers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointUpdateHeadersType0 | None | Unset, data)

        headers = _parse_headers(d.pop("headers", UNSET))

        def _parse_input_transformer(data: object) -> EndpointUpdateInputTransformerType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_transformer_type_0 = EndpointUpdateInputTransformerType0.from_dict(data)

                return input_transformer_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointUpdateInputTransformerType0 | None | Unset, data)

        input_transformer = _parse_input_transformer(d.pop("input_transformer", UNSET))

        def _parse_max_concurrency(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_concurrency = _parse_max_concurrency(d.pop("max_concurrency", UNSET))

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

        def _parse_retry_on_4xx(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        retry_on_4xx = _parse_retry_on_4xx(d.pop("retry_on_4xx", UNSET))

        def _parse_role_arn(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        role_arn = _parse_role_arn(d.pop("role_arn", UNSET))

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

        endpoint_update = cls(
            auth=auth,
            clear_auth=clear_auth,
            clear_content_filter=clear_content_filter,
            clear_input_transformer=clear_input_transformer,
            clear_ordering=clear_ordering,
            clear_rate_limit=clear_rate_limit,
            clear_tls=clear_tls,
            content_filter=content_filter,
            description=description,
            destination=destination,
            event_types=event_types,
            headers=headers,
            input_transformer=input_transformer,
            max_concurrency=max_concurrency,
            ordering=ordering,
            rate_limit_per_second=rate_limit_per_second,
            retry_on_4xx=retry_on_4xx,
            role_arn=role_arn,
            tls=tls,
            url=url,
        )

        return endpoint_update
