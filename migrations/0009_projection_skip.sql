-- Events and span edges the projector could not apply, set aside so that one bad record does not stop the reports of
-- every project (the projector narrows a failing batch down to the record and moves past it). A rebuild, after an
-- upgrade that fixes the cause, tries them again.
CREATE TABLE projection_skip (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  projection text NOT NULL,
  transaction_id xid8 NOT NULL,
  global_position bigint NOT NULL,
  project_id integer NOT NULL,
  error text NOT NULL,
  skipped_at timestamptz NOT NULL DEFAULT now()
);
