"""Named queries: what the parser hands to the database."""

from __future__ import annotations

import pytest

from hookline.sqlfiles import parse_queries

pytestmark = pytest.mark.unit


def test_comment_lines_are_not_sent_so_a_placeholder_in_one_is_no_parameter():
    # Given a query documented by comments that mention a placeholder
    text = """
-- find_tenant --
-- Scoped by %(tenant)s, like every API read.
SELECT id FROM tenants
WHERE id = %(id)s  -- the tenant asked for
-- trailing note: %(unused)s
"""
    # When it is parsed
    sql = parse_queries(text)["find_tenant"]
    # Then only the statement is sent (a comment after code on its line stays)
    assert sql == "SELECT id FROM tenants\nWHERE id = %(id)s  -- the tenant asked for"


def test_a_name_defined_twice_is_refused():
    with pytest.raises(ValueError, match="defined twice"):
        parse_queries("-- a --\nSELECT 1\n-- a --\nSELECT 2\n")
