// The cloud's schema, written once for both stores (docs/store-layout.md): numbered migrations, applied
// in order by the one runner (migrate.ts). What SQLite and PostgreSQL spell differently is a word of
// the Dialect below; the rest is the same SQL. A shipped migration never changes: a change is a new one,
// added at the end. test/cloud/store-schema.test.ts migrates both databases and compares every table's
// columns.

/** What the two databases spell differently. */
export interface Dialect {
  /** A 64-bit integer (epoch milliseconds, byte counts): SQLite's INTEGER is one already. */
  bigint: string;
  bytes: string;
  /** A floating-point number (a rate an operator sets). */
  real: string;
  /** SQLite has no boolean: 0 or 1 in an INTEGER. */
  boolean: string;
  false: string;
  /** A key the database assigns in increasing order. */
  serialKey: string;
  /** SQL that only SQLite gets (such as WITHOUT ROWID), or only PostgreSQL. */
  sqlite(sql: string): string;
  postgres(sql: string): string;
}

const SQLITE: Dialect = {
  bigint: 'INTEGER',
  bytes: 'BLOB',
  real: 'REAL',
  boolean: 'INTEGER',
  false: '0',
  serialKey: 'INTEGER PRIMARY KEY AUTOINCREMENT',
  sqlite: (sql) => sql,
  postgres: () => '',
};

const POSTGRES: Dialect = {
  bigint: 'BIGINT',
  bytes: 'BYTEA',
  real: 'DOUBLE PRECISION',
  boolean: 'BOOLEAN',
  false: 'false',
  serialKey: 'BIGSERIAL PRIMARY KEY',
  sqlite: () => '',
  postgres: (sql) => sql,
};

/** Each entry runs once, in order; the runner records how far each database is. */
function migrations(d: Dialect): readonly string[] {
  return [
    `CREATE TABLE firmware_releases (
       class TEXT NOT NULL,
       product_hex TEXT NOT NULL,
       application TEXT NOT NULL,
       version TEXT NOT NULL,
       status TEXT NOT NULL CHECK (status IN ('RELEASED', 'REVOKED')),
       released_at TEXT NOT NULL,
       revoked_at TEXT,
       url TEXT,
       size ${d.bigint},
       sha256 TEXT,
       PRIMARY KEY (class, product_hex, application, version)
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE TABLE devices (
       uuid TEXT PRIMARY KEY,
       public_key_pem TEXT NOT NULL,
       enrolled_at TEXT NOT NULL,
       updated_at TEXT NOT NULL
     );
     CREATE TABLE device_nonces (
       uuid TEXT NOT NULL,
       nonce TEXT NOT NULL,
       expires_at_ms ${d.bigint} NOT NULL,
       PRIMARY KEY (uuid, nonce)
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE INDEX device_nonces_expiry ON device_nonces (expires_at_ms);
     CREATE TABLE backups (
       uuid TEXT PRIMARY KEY,
       blob ${d.bytes} NOT NULL,
       etag TEXT,
       size INTEGER NOT NULL,
       last_backup_date TEXT NOT NULL
     );
     CREATE TABLE appconfig_versions (
       function_name TEXT NOT NULL,
       version INTEGER NOT NULL,
       configuration TEXT NOT NULL,
       created_at TEXT NOT NULL,
       PRIMARY KEY (function_name, version)
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE TABLE appconfig_deployments (
       function_name TEXT PRIMARY KEY,
       version INTEGER NOT NULL,
       configuration TEXT NOT NULL,
       started_at_ms ${d.bigint} NOT NULL,
       ends_at_ms ${d.bigint} NOT NULL
     );`,
    // Fleet operations (issue 21): hosted images, staged rollouts and their outcomes, the device
    // inventory and groups, the audit log.
    `ALTER TABLE firmware_releases ADD COLUMN hosted ${d.boolean} NOT NULL DEFAULT ${d.false};
     ALTER TABLE firmware_releases ADD COLUMN chip TEXT;
     ALTER TABLE firmware_releases ADD COLUMN project TEXT;
     ALTER TABLE devices ADD COLUMN label TEXT;
     CREATE TABLE firmware_images (
       class TEXT NOT NULL,
       product_hex TEXT NOT NULL,
       application TEXT NOT NULL,
       version TEXT NOT NULL,
       sha256 TEXT NOT NULL,
       size INTEGER NOT NULL,
       bytes ${d.bytes} NOT NULL,
       PRIMARY KEY (class, product_hex, application, version),
       FOREIGN KEY (class, product_hex, application, version) REFERENCES firmware_releases ON DELETE CASCADE
     )${d.sqlite(' WITHOUT ROWID')};
     ${d.postgres(`-- An image is compressed already: kept out of line, not compressed again.
     ALTER TABLE firmware_images ALTER COLUMN bytes SET STORAGE EXTERNAL;`)}
     CREATE TABLE rollouts (
       class TEXT NOT NULL,
       product_hex TEXT NOT NULL,
       application TEXT NOT NULL,
       version TEXT NOT NULL,
       percent INTEGER NOT NULL,
       groups TEXT NOT NULL,
       state TEXT NOT NULL CHECK (state IN ('active', 'paused')),
       step_percent INTEGER,
       step_every_seconds INTEGER,
       error_threshold_percent INTEGER NOT NULL,
       min_reports INTEGER NOT NULL,
       anchor_at_ms ${d.bigint} NOT NULL,
       paused_reason TEXT,
       created_at TEXT NOT NULL,
       updated_at TEXT NOT NULL,
       PRIMARY KEY (class, product_hex, application, version),
       FOREIGN KEY (class, product_hex, application, version) REFERENCES firmware_releases ON DELETE CASCADE
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE TABLE rollout_outcomes (
       class TEXT NOT NULL,
       product_hex TEXT NOT NULL,
       application TEXT NOT NULL,
       version TEXT NOT NULL,
       uuid TEXT NOT NULL,
       outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'succeeded', 'failed')),
       from_version TEXT NOT NULL,
       offered_at TEXT NOT NULL,
       settled_at TEXT,
       attempts INTEGER NOT NULL,
       PRIMARY KEY (class, product_hex, application, version, uuid)
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE TABLE device_inventory (
       uuid TEXT PRIMARY KEY REFERENCES devices (uuid) ON DELETE CASCADE,
       last_check_at TEXT NOT NULL,
       last_check_version TEXT NOT NULL,
       last_check_class TEXT NOT NULL,
       last_check_product_hex TEXT NOT NULL,
       last_check_application TEXT NOT NULL,
       offered_version TEXT,
       offered_from TEXT,
       offered_at TEXT
     );
     CREATE INDEX device_inventory_last_check ON device_inventory (last_check_at);
     CREATE TABLE device_groups (
       uuid TEXT NOT NULL REFERENCES devices (uuid) ON DELETE CASCADE,
       group_name TEXT NOT NULL,
       PRIMARY KEY (uuid, group_name)
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE INDEX device_groups_name ON device_groups (group_name, uuid);
     CREATE TABLE audit_log (
       id ${d.serialKey},
       at TEXT NOT NULL,
       actor TEXT NOT NULL,
       via TEXT NOT NULL,
       action TEXT NOT NULL,
       method TEXT NOT NULL,
       path TEXT NOT NULL,
       status INTEGER NOT NULL,
       details TEXT
     );`,
    // Signed images (docs/secure-boot.md): which key signed a hosted image, and each track's signing setting.
    `ALTER TABLE firmware_releases ADD COLUMN signed_block INTEGER;
     ALTER TABLE firmware_releases ADD COLUMN signed_key_digest TEXT;
     CREATE TABLE track_signing (
       class TEXT NOT NULL,
       product_hex TEXT NOT NULL,
       application TEXT NOT NULL,
       required ${d.boolean} NOT NULL${d.sqlite(' CHECK (required IN (0, 1))')},
       keys TEXT NOT NULL,
       updated_at TEXT NOT NULL,
       PRIMARY KEY (class, product_hex, application)
     )${d.sqlite(' WITHOUT ROWID')};`,
    // Operator console sessions (docs/operator-console.md): an opaque id in the cookie, only its SHA-256
    // here; log-out deletes the row, so it takes effect on every worker and instance.
    `CREATE TABLE console_sessions (
       id_hash TEXT PRIMARY KEY,
       subject TEXT,
       groups TEXT NOT NULL,
       csrf_hash TEXT NOT NULL,
       created_at TEXT NOT NULL,
       expires_at_ms ${d.bigint} NOT NULL
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE INDEX console_sessions_expiry ON console_sessions (expires_at_ms);`,
    // Device health (docs/device-health.md): each device's newest reports, its latest state, daily
    // aggregates per device, version and day, and its latest update outcome per version; every row
    // goes with its device. A rollout's health gate (docs/staged-rollouts.md): off while the margin is null.
    `CREATE TABLE health_reports (
       uuid TEXT NOT NULL REFERENCES devices (uuid) ON DELETE CASCADE,
       seq ${d.bigint} NOT NULL,
       kind TEXT NOT NULL CHECK (kind IN ('boot', 'heartbeat', 'update')),
       received_at TEXT NOT NULL,
       fw TEXT NOT NULL,
       up ${d.bigint} NOT NULL,
       body TEXT NOT NULL,
       PRIMARY KEY (uuid, seq)
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE TABLE health_devices (
       uuid TEXT PRIMARY KEY REFERENCES devices (uuid) ON DELETE CASCADE,
       last_seq ${d.bigint} NOT NULL,
       pruned_through ${d.bigint},
       last_received_at TEXT NOT NULL,
       last_up ${d.bigint} NOT NULL,
       last_fw TEXT NOT NULL,
       last_day TEXT NOT NULL,
       boot_at TEXT,
       boot_reason TEXT,
       boot_version TEXT,
       crash_at TEXT,
       crash_kind TEXT,
       crash_message TEXT,
       crash_version TEXT,
       heartbeat_at TEXT,
       heap_block ${d.bigint},
       heap_min ${d.bigint},
       rssi INTEGER,
       dropped ${d.bigint}
     );
     CREATE TABLE health_daily (
       uuid TEXT NOT NULL REFERENCES devices (uuid) ON DELETE CASCADE,
       version TEXT NOT NULL,
       day TEXT NOT NULL,
       reports INTEGER NOT NULL,
       boots INTEGER NOT NULL,
       heartbeats INTEGER NOT NULL,
       device_seconds ${d.bigint} NOT NULL,
       reboots_watchdog INTEGER NOT NULL,
       reboots_abort INTEGER NOT NULL,
       reboots_panic INTEGER NOT NULL,
       reboots_brownout INTEGER NOT NULL,
       reboots_unknown INTEGER NOT NULL,
       crashes_memory_full INTEGER NOT NULL,
       crashes_stack_overflow INTEGER NOT NULL,
       crashes_unhandled_exception INTEGER NOT NULL,
       crashes_unhandled_rejection INTEGER NOT NULL,
       crashes_abort INTEGER NOT NULL,
       crashes_panic INTEGER NOT NULL,
       heap_min ${d.bigint},
       block_min ${d.bigint},
       rssi_min INTEGER,
       PRIMARY KEY (uuid, version, day)
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE INDEX health_daily_version ON health_daily (version, uuid);
     CREATE TABLE health_outcomes (
       uuid TEXT NOT NULL REFERENCES devices (uuid) ON DELETE CASCADE,
       version TEXT NOT NULL,
       seq ${d.bigint} NOT NULL,
       outcome TEXT NOT NULL CHECK (outcome IN ('downloading', 'installing', 'succeeded', 'failed')),
       reason TEXT,
       detail TEXT,
       from_version TEXT NOT NULL,
       at TEXT NOT NULL,
       PRIMARY KEY (uuid, version)
     )${d.sqlite(' WITHOUT ROWID')};
     CREATE INDEX health_outcomes_version ON health_outcomes (version, uuid);
     ALTER TABLE rollouts ADD COLUMN health_margin ${d.real};
     -- 100: HEALTH_MIN_DEVICE_HOURS_DEFAULT (cloud/device-health/definitions.ts) when this was written.
     ALTER TABLE rollouts ADD COLUMN health_min_device_hours INTEGER NOT NULL DEFAULT 100;`,
    // A backup is encrypted (FFCE), so it never compresses: PostgreSQL's default storage for a bytea
    // (EXTENDED) tried pglz on every 64 KB row of a boot storm before storing it out of line; EXTERNAL
    // stores it out of line as it is (docs/fleet-scale.md, round 5: ~5 % of the server's CPU per row).
    // Rows written from then on; nothing to do on SQLite, whose step is only this comment.
    `-- backups.blob: stored out of line, not compressed (PostgreSQL only).
     ${d.postgres('ALTER TABLE backups ALTER COLUMN blob SET STORAGE EXTERNAL;')}`,
  ];
}

export const SQLITE_MIGRATIONS = migrations(SQLITE);
export const POSTGRES_MIGRATIONS = migrations(POSTGRES);
