from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.test_event_request_payload_type_0 import TestEventRequestPayloadType0


T = TypeVar("T", bound="TestEventRequest")


@_attrs_define
class TestEventRequest:
    """A test event for one endpoint.

    Attributes:
        payload (None | TestEventRequestPayloadType0 | Unset):
        type_ (str | Unset):  Default: 'hookline.test'.
    """

    payload: None | TestEventRequestPayloadType0 | Unset = UNSET
    type_: str | Unset = "hookline.test"

    def to_dict(self) -> dict[str, Any]:
        from ..models.test_event_request_payload_type_0 import TestEventRequestPayloadType0  # noqa: PLC0415

        payload: dict[str, Any] | None | Unset
        if isinstance(self.payload, Unset):
            payload = UNSET
        elif isinstance(self.payload, TestEventRequestPayloadType0):
            payload = self.payload.to_dict()
        else:
            payload = self.payload

        type_ = self.type_

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if payload is not UNSET:
            field_dict["payload"] = payload
        if type_ is not UNSET:
            field_dict["type"] = type_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.test_event_request_payload_type_0 import TestEventRequestPayloadType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_payload(data: object) -> None | TestEventRequestPayloadType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_0 = TestEventRequestPayloadType0.from_dict(data)

                return payload_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TestEventRequestPayloadType0 | Unset, data)

        payload = _parse_payload(d.pop("payload", UNSET))

        type_ = d.pop("type", UNSET)

        test_event_request = cls(
            payload=payload,
            type_=type_,
        )

        return test_event_request
