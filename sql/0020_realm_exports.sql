-- Data exports of organizations (Zulip's `RealmExport`): requested by an administrator
-- (`POST /export/realm`), written by the export worker, served as an upload link.
--
-- Applied once, in a transaction, when PRAGMA user_version < 20. Never edit a migration
-- that has landed: add the next numbered file instead.

CREATE TABLE realm_exports (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id        INTEGER NOT NULL REFERENCES realms(id),
    acting_user_id  INTEGER NOT NULL REFERENCES users(id),
    -- 1 public, 2 standard (public data, and the private data of those who consented).
    export_type     INTEGER NOT NULL,
    -- When it was requested (seconds since the epoch, with fractions).
    requested_at    REAL    NOT NULL,
    -- The archive's path id in the uploads storage, once written.
    path_id         TEXT,
    failed_at       REAL,
    deleted_at      REAL,
    -- Times the worker began it: a second beginning follows a crash or a restart.
    attempts        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX realm_exports_realm ON realm_exports (realm_id, id);
CREATE INDEX realm_exports_pending ON realm_exports (id) WHERE path_id IS NULL AND failed_at IS NULL AND deleted_at IS NULL;
