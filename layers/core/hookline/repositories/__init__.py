"""Repositories: the only code that runs SQL. Each function takes an open connection."""
