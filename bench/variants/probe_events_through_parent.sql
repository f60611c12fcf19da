-- A probe, not a design (bench/call_overhead.py and bench/deliver_calls.py --variant): the
-- claim reads each delivery's event through the parent `events` within the batch's days, as
-- it did before decision 0100, instead of from the day's partition of events. It prices
-- what the days kept cost a claim (`--past-days`).

-- replace:
        WHEN day_events IS NOT NULL AND to_regclass(day_events) IS NOT NULL
-- with:
        WHEN false
-- end
