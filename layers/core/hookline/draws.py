"""Hookline's own random draws (success-log sampling, retry and deferral jitter) come from a
generator of its own, never the `random` module's shared one: a host process (a producer
calling `hookline.publish`, a test run) keeps its seeded sequence whatever Hookline's threads
draw meanwhile."""

from __future__ import annotations

import random

draws = random.Random()
