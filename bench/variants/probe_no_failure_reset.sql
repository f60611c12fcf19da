-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the record ending an endpoint's failure
-- streak: a failing endpoint would then stay failing.

-- replace:
), recovered AS (
    UPDATE endpoints SET failing_since = NULL
    WHERE id IN (SELECT DISTINCT endpoint_id FROM done) AND failing_since IS NOT NULL
)
-- with:
)
-- end
