"""What an endpoint's custom header may be: a name and a value an HTTP/1.1 client can send.

RFC 9110 §5.1: a field name is a token (`!#$%&'*+-.^_`|~`, digits, letters); §5.5: a field
value is visible characters with spaces or tabs between them, no leading or trailing
whitespace, no CR, LF or NUL. The obsolete non-ASCII octets (`obs-text`) are refused too:
httpx encodes header values as ASCII, so a non-ASCII one would fail every attempt (issue 12).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(r"(?:[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*)?")


def header_problem(name: str, value: str) -> str | None:
    """Why `name: value` cannot be sent, naming the header and never quoting its value (it
    may be a token); None when it can."""
    shown = repr(name[:64])
    if not _TOKEN.fullmatch(name):
        return f"header name {shown} is not an RFC 9110 token (letters, digits, !#$%&'*+-.^_`|~)"
    if not _VALUE.fullmatch(value):
        return (
            f"header {shown}: the value must be visible ASCII, with spaces or tabs only "
            "between words"
        )
    return None
