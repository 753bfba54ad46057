-- Keys set through ERRATA_INGEST_KEY / ERRATA_READ_KEY are any string the operator chose: earlier versions stored
-- their first 8 characters as the prefix `keys list` shows (a short key whole). Every such key, revoked ones
-- included, is now shown by the start of its hash, as envKeyPrefix (api-key.service.ts) names new ones.
UPDATE api_key
   SET key_prefix = 'sha256:' || left(encode(key_hash, 'hex'), 8)
 WHERE managed_by = 'env' AND key_prefix NOT LIKE 'sha256:%';
