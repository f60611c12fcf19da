-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the claim's key-share lock: reconcile's
-- sweeps could then requeue a delivery being claimed.

-- replace:
                        FOR KEY SHARE OF x) d
-- with:
                        ) d
-- end
