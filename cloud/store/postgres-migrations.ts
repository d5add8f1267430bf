// The PostgreSQL schema, one migration a step, kept beside SQLite's (sqlite-migrations.ts): the same
// tables and columns in each store's own types. A shipped migration never changes; a change is a new one.
/** Applied in order, each in a transaction; `schema_migrations` records how far. */
export const POSTGRES_MIGRATIONS: readonly string[] = [
  `CREATE TABLE firmware_releases (
     class TEXT NOT NULL, product_hex TEXT NOT NULL, application TEXT NOT NULL, version TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('RELEASED', 'REVOKED')),
     released_at TEXT NOT NULL, revoked_at TEXT, url TEXT, size BIGINT, sha256 TEXT,
     PRIMARY KEY (class, product_hex, application, version));
   CREATE TABLE devices (uuid TEXT PRIMARY KEY, public_key_pem TEXT NOT NULL, enrolled_at TEXT NOT NULL, updated_at TEXT NOT NULL);
   CREATE TABLE device_nonces (uuid TEXT NOT NULL, nonce TEXT NOT NULL, expires_at_ms BIGINT NOT NULL, PRIMARY KEY (uuid, nonce));
   CREATE INDEX device_nonces_expiry ON device_nonces (expires_at_ms);
   CREATE TABLE backups (uuid TEXT PRIMARY KEY, blob BYTEA NOT NULL, etag TEXT, size INTEGER NOT NULL, last_backup_date TEXT NOT NULL);
   CREATE TABLE appconfig_versions (function_name TEXT NOT NULL, version INTEGER NOT NULL, configuration TEXT NOT NULL, created_at TEXT NOT NULL,
     PRIMARY KEY (function_name, version));
   CREATE TABLE appconfig_deployments (function_name TEXT PRIMARY KEY, version INTEGER NOT NULL, configuration TEXT NOT NULL,
     started_at_ms BIGINT NOT NULL, ends_at_ms BIGINT NOT NULL);`,
  // Fleet operations (issue 21), as SQLite's migration 2: hosted images, staged rollouts and their
  // outcomes, the device inventory and groups, the audit log (cloud/store/fleet-rows.ts).
  `ALTER TABLE firmware_releases ADD COLUMN hosted BOOLEAN NOT NULL DEFAULT false, ADD COLUMN chip TEXT, ADD COLUMN project TEXT;
   ALTER TABLE devices ADD COLUMN label TEXT;
   CREATE TABLE firmware_images (class TEXT NOT NULL, product_hex TEXT NOT NULL, application TEXT NOT NULL, version TEXT NOT NULL,
     sha256 TEXT NOT NULL, size INTEGER NOT NULL, bytes BYTEA NOT NULL,
     PRIMARY KEY (class, product_hex, application, version),
     FOREIGN KEY (class, product_hex, application, version) REFERENCES firmware_releases ON DELETE CASCADE);
   ALTER TABLE firmware_images ALTER COLUMN bytes SET STORAGE EXTERNAL;
   CREATE TABLE rollouts (class TEXT NOT NULL, product_hex TEXT NOT NULL, application TEXT NOT NULL, version TEXT NOT NULL,
     percent INTEGER NOT NULL, groups TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('active', 'paused')),
     step_percent INTEGER, step_every_seconds INTEGER, error_threshold_percent INTEGER NOT NULL, min_reports INTEGER NOT NULL,
     anchor_at_ms BIGINT NOT NULL, paused_reason TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
     PRIMARY KEY (class, product_hex, application, version),
     FOREIGN KEY (class, product_hex, application, version) REFERENCES firmware_releases ON DELETE CASCADE);
   CREATE TABLE rollout_outcomes (class TEXT NOT NULL, product_hex TEXT NOT NULL, application TEXT NOT NULL, version TEXT NOT NULL,
     uuid TEXT NOT NULL, outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'succeeded', 'failed')), from_version TEXT NOT NULL,
     offered_at TEXT NOT NULL, settled_at TEXT, attempts INTEGER NOT NULL,
     PRIMARY KEY (class, product_hex, application, version, uuid));
   CREATE TABLE device_inventory (uuid TEXT PRIMARY KEY REFERENCES devices (uuid) ON DELETE CASCADE,
     last_check_at TEXT NOT NULL, last_check_version TEXT NOT NULL, last_check_class TEXT NOT NULL,
     last_check_product_hex TEXT NOT NULL, last_check_application TEXT NOT NULL,
     offered_version TEXT, offered_from TEXT, offered_at TEXT);
   CREATE INDEX device_inventory_last_check ON device_inventory (last_check_at);
   CREATE TABLE device_groups (uuid TEXT NOT NULL REFERENCES devices (uuid) ON DELETE CASCADE, group_name TEXT NOT NULL,
     PRIMARY KEY (uuid, group_name));
   CREATE INDEX device_groups_name ON device_groups (group_name, uuid);
   CREATE TABLE audit_log (id BIGSERIAL PRIMARY KEY, at TEXT NOT NULL, actor TEXT NOT NULL, via TEXT NOT NULL, action TEXT NOT NULL,
     method TEXT NOT NULL, path TEXT NOT NULL, status INTEGER NOT NULL, details TEXT);`,
  // Signed images (docs/secure-boot.md), as SQLite's migration 3: which key signed a hosted image, and
  // each track's signing setting.
  `ALTER TABLE firmware_releases ADD COLUMN signed_block INTEGER, ADD COLUMN signed_key_digest TEXT;
   CREATE TABLE track_signing (class TEXT NOT NULL, product_hex TEXT NOT NULL, application TEXT NOT NULL,
     required BOOLEAN NOT NULL, keys TEXT NOT NULL, updated_at TEXT NOT NULL,
     PRIMARY KEY (class, product_hex, application));`,
  // Operator console sessions (docs/operator-console.md), as SQLite's migration 4: only the SHA-256 of
  // the cookie's opaque id; log-out deletes the row, so it takes effect on every instance.
  `CREATE TABLE console_sessions (id_hash TEXT PRIMARY KEY, subject TEXT, groups TEXT NOT NULL, csrf_hash TEXT NOT NULL,
     created_at TEXT NOT NULL, expires_at_ms BIGINT NOT NULL);
   CREATE INDEX console_sessions_expiry ON console_sessions (expires_at_ms);`,
];
