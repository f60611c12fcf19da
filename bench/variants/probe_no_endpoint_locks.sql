-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the claim's endpoint locks (decision
-- 0092), though not the lookup of the batch's endpoints, which also reads their rates and the
-- crash marker: two claims of one endpoint could then both count a free slot.

-- replace:
    SELECT hookline_lock_endpoint_slots(array_agg(d.endpoint_id)),
-- with:
    SELECT NULL::boolean,
-- end
