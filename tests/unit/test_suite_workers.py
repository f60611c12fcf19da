"""`make test` runs the suite on pytest-xdist workers (decision 0089), where a test that
reports through subtests loses its failures: schemathesis runs each OpenAPI operation as one,
and under xdist a failure planted in one operation passed. Such a module must be marked
`alone`, which `make test` runs after the workers in one process."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
USES_SCHEMATHESIS = re.compile(r"^(import schemathesis|from schemathesis\b)", re.MULTILINE)
MARKED_ALONE = re.compile(r"^pytestmark = .*pytest\.mark\.alone\b", re.MULTILINE)


def test_every_module_using_schemathesis_runs_alone():
    users = sorted(
        path for path in TESTS.rglob("test_*.py") if USES_SCHEMATHESIS.search(path.read_text())
    )
    assert users, "no test uses schemathesis any more: drop this check and the `alone` note"
    unmarked = [str(p.relative_to(TESTS)) for p in users if not MARKED_ALONE.search(p.read_text())]
    assert not unmarked, f"mark these `pytestmark = [..., pytest.mark.alone]`: {unmarked}"
