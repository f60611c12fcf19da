"""Schema patterns on RE2 (docs/decisions/0023): compiled once per container into a cache
bounded in number and program size, searched in linear time, each search drawing from the
validation budget by its text's length times the pattern's weight (decision 0027); and the
jsonschema keywords (`pattern`, `patternProperties`, `additionalProperties`) that use them.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import re2
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from hookline.catalogue_limits import DEFAULT_LIMITS
from hookline.schema_guards import spend

MAX_REASON = 300

# A pattern search of n bytes with a program that can hold w threads at once costs at most
# about n * w thread steps (RE2's NFA, when its DFA runs out of memory): one budget step
# per this many.
_THREAD_STEPS_PER_STEP = 100

# RE2 memory per compiled byte of pattern program at save (RE2 stops compiling past its
# budget, so an oversized pattern costs at most about this much to refuse).
_SAVE_MEM_PER_INSTRUCTION = 32


class UnusablePattern(Exception):
    """A stored pattern RE2 cannot compile (saved before patterns were checked)."""


def _re2_options(max_mem: int | None = None, latin1: bool = False) -> Any:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is the caller's 422, not a log line
    options.never_capture = True  # only "does it match" is asked
    if max_mem is not None:
        options.max_mem = max_mem
    if latin1:
        options.encoding = re2.Options.Encoding.LATIN1
    return options


_RE2_OPTIONS = _re2_options()
# In Latin-1 a Unicode class is one instruction, not a UTF-8 byte trie of ~1,200: the
# program's size is then about how many threads RE2's NFA can run at once.
_RE2_WEIGHT_OPTIONS = _re2_options(latin1=True)


class PatternCache:
    """Compiled patterns, least recently used first out, bounded in number and in RE2
    program size (about 16 bytes an instruction) together."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, tuple[Any, int, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._size = 0
        self.max_entries = DEFAULT_LIMITS.pattern_cache_max_entries
        self.max_program_size = DEFAULT_LIMITS.pattern_cache_max_program_size

    def bound(self, max_entries: int, max_program_size: int) -> None:
        """Keep at most `max_entries` patterns of `max_program_size` instructions together."""
        self.max_entries, self.max_program_size = max_entries, max_program_size

    def get(self, pattern: str) -> tuple[Any, int]:
        """The compiled program of `pattern` and its weight (threads at once)."""
        # A hit takes no lock: OrderedDict's get and move_to_end are each atomic under the
        # GIL; an entry evicted in between is simply not refreshed.
        found = self._entries.get(pattern)
        if found is not None:
            with contextlib.suppress(KeyError):
                self._entries.move_to_end(pattern)
            return found[0], found[1]
        # Compiled and searched as UTF-8 bytes (RE2's own encoding): the same matches as
        # str, without the wrapper's per-call character-offset bookkeeping (~3x faster).
        program = re2.compile(pattern.encode(), _RE2_OPTIONS)
        size = max(program.programsize, 1)
        try:
            weight = max(re2.compile(pattern.encode(), _RE2_WEIGHT_OPTIONS).programsize, 1)
        except re2.error:
            weight = size
        with self._lock:
            if pattern not in self._entries:
                self._entries[pattern] = (program, weight, size)
                self._size += size
            while self._entries and (
                len(self._entries) > self.max_entries or self._size > self.max_program_size
            ):
                self._size -= self._entries.popitem(last=False)[1][2]
        return program, weight

    def stats(self) -> tuple[int, int]:
        """(patterns kept, their program size together)."""
        with self._lock:
            return len(self._entries), self._size

    def clear(self) -> None:
        """Forget every compiled pattern."""
        with self._lock:
            self._entries.clear()
            self._size = 0


patterns = PatternCache()


def pattern_cache_stats() -> tuple[int, int]:
    """How many compiled patterns this container keeps, and their RE2 program size."""
    return patterns.stats()


def _re2_program(pattern: str) -> Any:
    return patterns.get(pattern)[0]


def program_size_within(pattern: str, cap: int) -> int:
    """The RE2 program size of `pattern`, compiled with a memory budget just above `cap`
    instructions (RE2 gives up past it, so an oversized pattern is refused early in its
    compile): more than `cap` when it is over. Raises re2.error for what RE2 cannot run."""
    budget = _re2_options(max_mem=max(cap * _SAVE_MEM_PER_INSTRUCTION, 64 * 1024))
    try:
        return int(re2.compile(pattern.encode(), budget).programsize)
    except re2.error as err:
        if "pattern too large" not in re2_reason(err):
            raise
        return cap + 1


def re2_compiles(pattern: object) -> bool:
    """The metaschema's `format: regex` judged by RE2 (raises re2.error when it cannot)."""
    if isinstance(pattern, str):
        _re2_program(pattern)
    return True


def re2_reason(err: BaseException) -> str:
    """RE2's reason for refusing a pattern, as short text."""
    reason = err.args[0] if err.args else err
    text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
    return _short(text)


def _matches(pattern: str, text: str) -> bool:
    """Whether `pattern` matches anywhere in `text` (ECMA-262's `test`, which JSON Schema
    asks for), in time linear in the text."""
    try:
        program, weight = patterns.get(pattern)
    except re2.error as err:
        raise UnusablePattern(f"pattern {pattern[:100]!r}: {re2_reason(err)}") from None
    try:
        encoded = text.encode()
    except UnicodeEncodeError:
        # A lone surrogate is valid in JSON text but not in UTF-8: match it as U+FFFD.
        encoded = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()
    spend(1 + len(encoded) * weight // _THREAD_STEPS_PER_STEP)
    return program.search(encoded) is not None


def _pattern(
    validator: Validator, pattern: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Validator, patterns: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Validator, allowed: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    # jsonschema's own runs the patternProperties keys with `re`: the same rule, on RE2.
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = sorted(
        (k for k in instance if k not in known and not any(_matches(p, k) for p in patterns)),
        key=str,
    )
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        joined = ", ".join(repr(each) for each in extras)
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


RE2_KEYWORDS: dict[str, Callable[..., Iterator[ValidationError]]] = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


def _short(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def clear_patterns() -> None:
    """Forget every compiled pattern (tests)."""
    patterns.clear()
