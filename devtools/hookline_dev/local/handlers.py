"""The Lambda handlers `hookline dev` runs, imported from `functions/` as they are deployed:
the deliver handler once per calling thread (a container per concurrent batch), the others
once (docs/decisions/0009-local-dev-stack.md)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hookline_dev.local.apigw import LocalContext
from hookline_dev.local.devoptions import DevStackError

OPTIONAL_FUNCTIONS = ("reconcile", "console")  # scheduled or routed only once they exist


def load_handlers() -> dict[str, Callable[..., Any]]:
    """The Lambda handlers, imported from `functions/` (the optional ones once they exist).

    The deliver handler gets one module instance per calling thread (`ContainerPerThread`);
    the others are imported once.
    """
    ensure_functions_importable()
    handlers: dict[str, Callable[..., Any]] = {}
    for name in ("receiver", "api", "fanout", "reconcile", "console"):
        if name in OPTIONAL_FUNCTIONS and not handler_exists(name):
            continue
        module = importlib.import_module(f"functions.{name}.handler")
        handlers[name] = module.lambda_handler
    handlers["deliver"] = ContainerPerThread("functions.deliver.handler")
    return handlers


class ContainerPerThread:
    """A Lambda handler whose module is loaded afresh for each thread that calls it.

    On AWS every concurrent invocation runs in a container of its own, with its own copy of
    the module's globals: the deliver handler's thread pool, which runs a batch's records in
    parallel, is per container. The event source calls the handler from one thread per batch
    in flight, so a module copy per thread is a container per concurrent batch: a group's
    batches do not queue behind each other's (or another group's) records, as on AWS. Shared
    collaborators that live outside the module (the database pool, the HTTP client) are
    process-wide, as `hookline.runtime` builds them.
    """

    def __init__(self, module: str) -> None:
        """`module` is the handler module's dotted name; it must define `lambda_handler`."""
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise DevStackError(f"cannot find the handler module {module}")
        self.module = module
        self.origin = spec.origin
        self._local = threading.local()
        self._lock = threading.Lock()
        self.containers = 0

    def __call__(self, event: dict[str, Any], context: Any) -> Any:
        """Invoke this thread's copy (loading it on the first call: a cold start)."""
        handler = getattr(self._local, "handler", None)
        if handler is None:
            with self._lock:
                self.containers += 1
                name = f"{self.module}__container_{self.containers}"
            spec = importlib.util.spec_from_file_location(name, self.origin)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            handler = self._local.handler = module.lambda_handler
        return handler(event, context)


def handler_exists(name: str) -> bool:
    """Whether `functions/<name>/handler.py` exists."""
    ensure_functions_importable()
    try:
        return importlib.util.find_spec(f"functions.{name}.handler") is not None
    except ModuleNotFoundError:
        return False


def ensure_functions_importable() -> None:
    """Put the project root (which holds `functions/`) on `sys.path` if it is not there.

    The `hookline` console script runs with its own folder on the path, not the project's; the
    package lives in `<root>/devtools/hookline_dev`, so the root is found from it (or the cwd).
    """
    with contextlib.suppress(ModuleNotFoundError):
        if importlib.util.find_spec("functions.receiver.handler") is not None:
            return
    package_root = Path(__file__).resolve().parents[3]
    for candidate in (Path.cwd(), package_root):
        if (candidate / "functions" / "receiver" / "handler.py").exists():
            sys.path.insert(0, str(candidate))
            importlib.invalidate_caches()
            return
    raise DevStackError("cannot find the functions/ folder of the Hookline project")


def context_factory(function_name: str, timeout: float) -> Callable[[], LocalContext]:
    """A fresh Lambda context of `function_name` for each invocation."""
    return lambda: LocalContext(function_name=function_name, timeout_seconds=timeout)
