from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="HealthPeriod")


@_attrs_define
class HealthPeriod:
    """An endpoint's attempts over one period.

    Attributes:
        attempts (int):
        consecutive_failures (int):
        last_success_at (None | str):
        p50_ms (int | None):
        p99_ms (int | None):
        success_rate (float | None): successes / attempts; null without any
        successes (int):
    """

    attempts: int
    consecutive_failures: int
    last_success_at: None | str
    p50_ms: int | None
    p99_ms: int | None
    success_rate: float | None
    successes: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        consecutive_failures = self.consecutive_failures

        last_success_at: None | str
        last_success_at = self.last_success_at

        p50_ms: int | None
        p50_ms = self.p50_ms

        p99_ms: int | None
        p99_ms = self.p99_ms

        success_rate: float | None
        success_rate = self.success_rate

        successes = self.successes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "consecutive_failures": consecutive_failures,
                "last_success_at": last_success_at,
                "p50_ms": p50_ms,
                "p99_ms": p99_ms,
                "success_rate": success_rate,
                "successes": successes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        consecutive_failures = d.pop("consecutive_failures")

        def _parse_last_success_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_success_at = _parse_last_success_at(d.pop("last_success_at"))

        def _parse_p50_ms(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        p50_ms = _parse_p50_ms(d.pop("p50_ms"))

        def _parse_p99_ms(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        p99_ms = _parse_p99_ms(d.pop("p99_ms"))

        def _parse_success_rate(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        success_rate = _parse_success_rate(d.pop("success_rate"))

        successes = d.pop("successes")

        health_period = cls(
            attempts=attempts,
            consecutive_failures=consecutive_failures,
            last_success_at=last_success_at,
            p50_ms=p50_ms,
            p99_ms=p99_ms,
            success_rate=success_rate,
            successes=successes,
        )

        health_period.additional_properties = d
        return health_period

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
