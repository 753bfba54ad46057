-- Suggested fixes pushed to the owners of MCP servers and verified from later traffic (DOMAIN.md §7).

-- Who owns which MCP server (by serverInfo name, optionally a version range), and where fixes go.
CREATE TABLE server_owner (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id integer NOT NULL REFERENCES project (id) ON DELETE CASCADE,
  server_name text NOT NULL,
  -- Space-separated comparators such as ">=1.2.0 <2"; null: every version.
  version_range text,
  webhook_url text NOT NULL,
  contact text,
  -- Standard Webhooks secrets (whsec_…), newest first: during a rotation every one of them signs.
  secrets text[] NOT NULL,
  disabled_at timestamptz,
  disabled_reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT server_owner_uq UNIQUE NULLS NOT DISTINCT (project_id, server_name, version_range)
);

-- The lifecycle of every fix as events: FixSuggested, FixDelivered, FixAcknowledged, FixVerified, FixRegressed.
CREATE TABLE fix_event (
  global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id integer NOT NULL REFERENCES project (id) ON DELETE CASCADE,
  finding_id text NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fix_event_project_id_finding_id_idx ON fix_event (project_id, finding_id, global_position);

-- Each fix as its events fold it (libs/domain evolveFix), written in the same transaction as the events.
CREATE TABLE fix (
  project_id integer NOT NULL REFERENCES project (id) ON DELETE CASCADE,
  finding_id text NOT NULL,
  state text NOT NULL,
  body jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT fix_pkey PRIMARY KEY (project_id, finding_id)
);

-- Transactional outbox of webhook messages. msg_id is the Standard Webhooks webhook-id: the same on every attempt
-- and on a manual redelivery. dedupe_key keeps a message from being enqueued twice.
CREATE TABLE webhook_delivery (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id integer NOT NULL REFERENCES project (id) ON DELETE CASCADE,
  owner_id uuid NOT NULL REFERENCES server_owner (id) ON DELETE CASCADE,
  finding_id text,
  msg_id text NOT NULL,
  dedupe_key text NOT NULL,
  event_type text NOT NULL,
  payload text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead', 'disabled')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz,
  CONSTRAINT webhook_delivery_dedupe_uq UNIQUE (owner_id, dedupe_key)
);
CREATE INDEX webhook_delivery_due_idx ON webhook_delivery (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_delivery_project_id_status_idx ON webhook_delivery (project_id, status, created_at);
