"""This process's environment set for a while to what a stack exports, with the cached
database pool and runtime rebuilt on the way in and out (both read the environment once)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping


@contextlib.contextmanager
def exported(env: Mapping[str, str]) -> Iterator[None]:
    """Set `env` in os.environ until the block ends, then put back what was there."""
    from hookline.db import reset_database
    from hookline.runtime import reset_runtime

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    reset_database()
    reset_runtime()
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        reset_database()
        reset_runtime()
