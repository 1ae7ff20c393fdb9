-- Idempotency keys belong to an API client or an agent (notes take keys from agents too, api.md v1.1).
-- A key is now claimed, used and completed inside the transaction of the change it guards, so a
-- committed 'running' row can only be left by an older build that died: the service takes it over.
-- The foreign key to api_clients goes (an owner may be an agent); rows still expire after 24 hours.
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_client_id_fkey;
ALTER TABLE idempotency_keys RENAME COLUMN client_id TO owner_id;
ALTER TABLE idempotency_keys ADD COLUMN owner_kind text NOT NULL DEFAULT 'api_client'
    CONSTRAINT idempotency_keys_owner_kind_check CHECK (owner_kind IN ('api_client', 'agent'));
ALTER TABLE idempotency_keys ALTER COLUMN owner_kind DROP DEFAULT;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (owner_kind, owner_id, key);
