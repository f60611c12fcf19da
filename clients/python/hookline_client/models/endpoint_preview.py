from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_preview_content_filter_type_0 import EndpointPreviewContentFilterType0
    from ..models.endpoint_preview_input_transformer_type_0 import EndpointPreviewInputTransformerType0


T = TypeVar("T", bound="EndpointPreview")


@_attrs_define
class EndpointPreview:
    """An event to try an endpoint's content filter and input transformer on; either may be
    given here to try it before saving it.

        Attributes:
            type_ (str):
            content_filter (EndpointPreviewContentFilterType0 | None | Unset):
            input_transformer (EndpointPreviewInputTransformerType0 | None | Unset):
            payload (Any | Unset):
            source_id (None | str | Unset):
    """

    type_: str
    content_filter: EndpointPreviewContentFilterType0 | None | Unset = UNSET
    input_transformer: EndpointPreviewInputTransformerType0 | None | Unset = UNSET
    payload: Any | Unset = UNSET
    source_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_preview_content_filter_type_0 import EndpointPreviewContentFilterType0  # noqa: PLC0415
        from ..models.endpoint_preview_input_transformer_type_0 import EndpointPreviewInputTransformerType0  # noqa: PLC0415

        type_ = self.type_

        content_filter: dict[str, Any] | None | Unset
        if isinstance(self.content_filter, Unset):
            content_filter = UNSET
        elif isinstance(self.content_filter, EndpointPreviewContentFilterType0):
            content_filter = self.content_filter.to_dict()
        else:
            content_filter = self.content_filter

        input_transformer: dict[str, Any] | None | Unset
        if isinstance(self.input_transformer, Unset):
            input_transformer = UNSET
        elif isinstance(self.input_transformer, EndpointPreviewInputTransformerType0):
            input_transformer = self.input_transformer.to_dict()
        else:
            input_transformer = self.input_transformer

        payload = self.payload

        source_id: None | str | Unset
        if isinstance(self.source_id, Unset):
            source_id = UNSET
        else:
            source_id = self.source_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
            }
        )
        if content_filter is not UNSET:
            field_dict["content_filter"] = content_filter
        if input_transformer is not UNSET:
            field_dict["input_transformer"] = input_transformer
        if payload is not UNSET:
            field_dict["payload"] = payload
        if source_id is not UNSET:
            field_dict["source_id"] = source_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_preview_content_filter_type_0 import EndpointPreviewContentFilterType0  # noqa: PLC0415
        from ..models.endpoint_preview_input_transformer_type_0 import EndpointPreviewInputTransformerType0  # noqa: PLC0415

        d = dict(src_dict)
        type_ = d.pop("type")

        def _parse_content_filter(data: object) -> EndpointPreviewContentFilterType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                content_filter_type_0 = EndpointPreviewContentFilterType0.from_dict(data)

                return content_filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointPreviewContentFilterType0 | None | Unset, data)

        content_filter = _parse_content_filter(d.pop("content_filter", UNSET))

        def _parse_input_transformer(data: object) -> EndpointPreviewInputTransformerType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_transformer_type_0 = EndpointPreviewInputTransformerType0.from_dict(data)

                return input_transformer_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointPreviewInputTransformerType0 | None | Unset, data)

        input_transformer = _parse_input_transformer(d.pop("input_transformer", UNSET))

        payload = d.pop("payload", UNSET)

        def _parse_source_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_id = _parse_source_id(d.pop("source_id", UNSET))

        endpoint_preview = cls(
            type_=type_,
            content_filter=content_filter,
            input_transformer=input_transformer,
            payload=payload,
            source_id=source_id,
        )

        return endpoint_preview
