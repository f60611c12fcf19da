-- A delivery's write compiles one trigger condition and no CHECK constraint (decision 0114).
-- Postgres keeps a CHECK constraint's expression and a trigger's WHEN as stored text, and
-- reads and compiles each again in every statement that writes the table, whatever its rows
-- (ExecConstraints, TriggerEnabled). Per delivered event with one endpoint that was ~6 % of the
-- backends' CPU (`bench/pipeline.py --perf`): the state's CHECK and the markers' WHEN on the
-- receipt's insert; the CHECK, the markers' WHEN and the release's WHEN on deliver's record.
--
-- * The markers' triggers already run for every state but the three of the hot path (queued,
--   delivering, delivered: their WHEN). So they check the state, with the error the CHECK
--   gave (check_violation, constraint deliveries_state_check), and the CHECK goes: a state
--   outside the set is refused as before, on insert and on update.
-- * The release of a key's next held delivery (migration 0028) runs in the markers' update
--   trigger, whose WHEN covers it (an ordered delivery's every update): one WHEN a statement
--   instead of two.
-- * A new delivery skips the markers' insert trigger only in the one state the hot path makes
--   it in, queued and unordered: a shorter WHEN (~640 characters of node text where the
--   update's has ~1,700). No writer sets a marker: the trigger writes them all.

-- The states a delivery can be in: the one rule, for both triggers.
CREATE FUNCTION hookline_check_delivery_state(state text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF state IS NULL
       OR state NOT IN ('pending', 'queued', 'delivering', 'delivered', 'failed', 'dead', 'held') THEN
        RAISE check_violation USING
            MESSAGE = format('a delivery cannot be in state %L', state),
            TABLE = 'deliveries', COLUMN = 'state', CONSTRAINT = 'deliveries_state_check';
    END IF;
END $$;

-- A key's oldest held delivery becomes pending, unless another of the key runs (a replayed
-- one: it releases next). Was the body of the trigger function of the same name.
DROP TRIGGER deliveries_release_next_held ON deliveries;
DROP FUNCTION hookline_release_next_held();
CREATE FUNCTION hookline_release_next_held(p_endpoint_id text, p_key text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM deliveries a
               WHERE a.endpoint_id = p_endpoint_id AND a.ordering_key = p_key
                 AND a.ordering_open AND a.state IN ('pending', 'queued', 'delivering')) THEN
        RETURN;
    END IF;
    UPDATE deliveries d
    SET state = 'pending', next_attempt_at = now(),
        deadline_at = now() + (d.deadline_at - d.created_at), updated_at = now()
    WHERE d.id = (SELECT h.id FROM deliveries h
                  WHERE h.endpoint_id = p_endpoint_id AND h.ordering_key = p_key
                    AND h.ordering_open AND h.state = 'held'
                  ORDER BY h.ordering_position LIMIT 1)
      AND d.state = 'held';
END $$;

CREATE OR REPLACE FUNCTION hookline_mark_new_delivery() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hookline_check_delivery_state(NEW.state);
    SELECT m.due_at, m.failed_at, m.ordering_open
    INTO NEW.due_at, NEW.failed_at, NEW.ordering_open
    FROM hookline_delivery_markers(NEW.state, NEW.next_attempt_at, NEW.updated_at,
                                   NEW.ordering_key) m;
    RETURN NEW;
END $$;

-- A changed delivery: its state checked, its markers written again if they moved, and, when
-- an ordered one just finished, its key's next held delivery released.
CREATE OR REPLACE FUNCTION hookline_mark_changed_delivery() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    m record;
BEGIN
    PERFORM hookline_check_delivery_state(NEW.state);
    SELECT * INTO m FROM hookline_delivery_markers(NEW.state, NEW.next_attempt_at,
                                                   NEW.updated_at, NEW.ordering_key);
    IF (NEW.due_at, NEW.failed_at, NEW.ordering_open)
       IS DISTINCT FROM (m.due_at, m.failed_at, m.ordering_open) THEN
        UPDATE deliveries
        SET due_at = m.due_at, failed_at = m.failed_at, ordering_open = m.ordering_open
        WHERE id = NEW.id;
    END IF;
    IF NEW.ordering_key IS NOT NULL AND NEW.state IN ('delivered', 'failed', 'dead')
       AND OLD.state IS DISTINCT FROM NEW.state THEN
        PERFORM hookline_release_next_held(NEW.endpoint_id, NEW.ordering_key);
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER deliveries_markers_on_insert ON deliveries;
CREATE TRIGGER deliveries_markers_on_insert BEFORE INSERT ON deliveries FOR EACH ROW
    WHEN (NEW.state <> 'queued' OR NEW.ordering_key IS NOT NULL)
    EXECUTE FUNCTION hookline_mark_new_delivery();

-- The partitions' copies go with the parent's (a partition's CHECK is inherited from it).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_state_check;
