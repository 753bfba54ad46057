-- The projector looks up, for each record it would set aside, whether the records right before it were set aside:
-- by projection and log position, which stays cheap however many records were set aside over time.
CREATE INDEX projection_skip_position_idx ON projection_skip (projection, transaction_id, global_position);
