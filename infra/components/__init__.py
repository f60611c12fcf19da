"""Small constructs that the Hookline stack composes."""
