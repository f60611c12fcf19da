"""Hookline's random draws (success-log sampling, retry jitter) leave the `random` module's
shared sequence alone: a host process seeding it gets the same numbers whatever Hookline drew
meanwhile (and Hypothesis, which checks that sequence around each example, warns of none)."""

from __future__ import annotations

import random

from hookline import observability
from hookline.retry import RetryPolicy


def test_jitter_and_log_sampling_do_not_draw_from_the_shared_generator(monkeypatch):
    monkeypatch.setattr(observability, "success_sample_rate", 0.5)
    random.seed(7)
    expected = [random.random() for _ in range(3)]
    random.seed(7)
    delays = {RetryPolicy().next_delay(3) for _ in range(20)}
    for _ in range(20):
        observability.log_success("sampled or not")
    assert len(delays) > 1  # the jitter did draw
    assert [random.random() for _ in range(3)] == expected
