from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointThresholds")


@_attrs_define
class EndpointThresholds:
    """An endpoint's thresholds in force.

    Attributes:
        endpoint_id (str):
        failing_after_attempts (int | None | Unset):
        failing_error_rate (float | None | Unset):
        failing_window_seconds (int | None | Unset):
    """

    endpoint_id: str
    failing_after_attempts: int | None | Unset = UNSET
    failing_error_rate: float | None | Unset = UNSET
    failing_window_seconds: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        failing_after_attempts: int | None | Unset
        if isinstance(self.failing_after_attempts, Unset):
            failing_after_attempts = UNSET
        else:
            failing_after_attempts = self.failing_after_attempts

        failing_error_rate: float | None | Unset
        if isinstance(self.failing_error_rate, Unset):
            failing_error_rate = UNSET
        else:
            failing_error_rate = self.failing_error_rate

        failing_window_seconds: int | None | Unset
        if isinstance(self.failing_window_seconds, Unset):
            failing_window_seconds = UNSET
        else:
            failing_window_seconds = self.failing_window_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "endpoint_id": endpoint_id,
            }
        )
        if failing_after_attempts is not UNSET:
            field_dict["failing_after_attempts"] = failing_after_attempts
        if failing_error_rate is not UNSET:
            field_dict["failing_error_rate"] = failing_error_rate
        if failing_window_seconds is not UNSET:
            field_dict["failing_window_seconds"] = failing_window_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        def _parse_failing_after_attempts(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        failing_after_attempts = _parse_failing_after_attempts(d.pop("failing_after_attempts", UNSET))

        def _parse_failing_error_rate(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        failing_error_rate = _parse_failing_error_rate(d.pop("failing_error_rate", UNSET))

        def _parse_failing_window_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        failing_window_seconds = _parse_failing_window_seconds(d.pop("failing_window_seconds", UNSET))

        endpoint_thresholds = cls(
            endpoint_id=endpoint_id,
            failing_after_attempts=failing_after_attempts,
            failing_error_rate=failing_error_rate,
            failing_window_seconds=failing_window_seconds,
        )

        return endpoint_thresholds
