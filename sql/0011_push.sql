-- Mobile push notifications (Zulip's PushDeviceToken, PushDevice and the
-- missedmessage_mobile_notifications queue).

-- The devices a user registered: legacy ones by their FCM/APNs token (`token`), end-to-end
-- encrypted ones by the client's `push_account_id` and the public key notifications are
-- sealed to. A device goes with its user.
CREATE TABLE push_devices (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id           INTEGER NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
    user_id            INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- 'fcm' or 'apns'.
    token_kind         TEXT    NOT NULL,
    -- Legacy devices only.
    token              TEXT,
    ios_app_id         TEXT,
    -- End-to-end encrypted devices only.
    push_account_id    INTEGER,
    push_public_key    TEXT,
    -- The bouncer's id of an end-to-end encrypted device, once it registered it.
    bouncer_device_id  INTEGER,
    -- 'active', 'pending' (end-to-end encrypted, not yet registered) or 'failed'.
    status             TEXT    NOT NULL,
    error_code         TEXT,
    date_created       INTEGER NOT NULL,
    UNIQUE (user_id, token_kind, token),
    UNIQUE (user_id, push_account_id)
);
CREATE INDEX push_devices_realm ON push_devices (realm_id, user_id);

-- Work for the push worker, in order (`id`): registrations to forward to the bouncer,
-- notifications and their removals. Written in the transaction of the change that causes
-- it, deleted once the bouncer took it (or the job was given up), so nothing is lost when
-- the server stops and nothing is sent twice while it runs.
CREATE TABLE push_outbox (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id      INTEGER NOT NULL,
    user_id       INTEGER NOT NULL,
    -- 'register', 'unregister', 'unregister_all', 'e2ee_register', 'message', 'remove'.
    kind          TEXT    NOT NULL,
    -- The job's data (JSON).
    payload       TEXT    NOT NULL,
    -- Failed attempts so far, and when the job is due (milliseconds since the epoch).
    attempts      INTEGER NOT NULL DEFAULT 0,
    due_at        INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    last_error    TEXT
);
CREATE INDEX push_outbox_due ON push_outbox (due_at, id);

-- The messages a user has a notification showing for (Zulip's
-- `active_mobile_push_notification` flag, bit 4096): found again when they are read, to
-- remove the notification.
CREATE INDEX user_messages_active_push ON user_messages (user_id) WHERE (flags & 4096) != 0;
