-- Bots (Zulip's bot fields of UserProfile, its Service and BotConfigData rows), bot storage
-- (Zulip's BotStorageData) and the outgoing-webhook worker's durable outbox.

-- What a bot has beyond its `users` row. A bot without a row here has the defaults (no
-- default channels, no service).
CREATE TABLE bot_profiles (
    user_id                            INTEGER PRIMARY KEY REFERENCES users(id),
    default_sending_stream_id          INTEGER REFERENCES channels(id),
    default_events_register_stream_id  INTEGER REFERENCES channels(id),
    default_all_public_streams         INTEGER NOT NULL DEFAULT 0,
    -- Outgoing-webhook and embedded bots: the service (Zulip's `Service`).
    service_name                       TEXT,
    -- Where an outgoing webhook posts; the interface (1 generic, 2 Slack) and the token it
    -- sends along.
    service_base_url                   TEXT,
    service_interface                  INTEGER,
    service_token                      TEXT,
    -- Incoming-webhook and embedded bots' configuration: a JSON object of strings.
    config_data                        TEXT    NOT NULL DEFAULT '{}'
);

-- A bot's (or any user's) key-value storage, used by the bot frameworks.
CREATE TABLE bot_storage (
    user_id  INTEGER NOT NULL REFERENCES users(id),
    key      TEXT    NOT NULL,
    value    TEXT    NOT NULL,
    PRIMARY KEY (user_id, key)
);

-- Messages that trigger an outgoing webhook, written in the same transaction as the
-- message: the worker POSTs `payload` to `url`, and posts the reply back as the bot. A job
-- is deleted once done or given up; a failure is retried with a growing delay.
CREATE TABLE outgoing_webhook_jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id         INTEGER NOT NULL REFERENCES realms(id),
    bot_id           INTEGER NOT NULL REFERENCES users(id),
    message_id       INTEGER NOT NULL,
    url              TEXT    NOT NULL,
    -- 1 generic, 2 Slack.
    interface        INTEGER NOT NULL,
    -- The JSON body of the request (Zulip's generic payload); the worker keeps what it
    -- needs to answer (where the triggering message was) in it too.
    payload          TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    -- Milliseconds since the epoch.
    next_attempt_at  INTEGER NOT NULL,
    last_error       TEXT
);
CREATE INDEX outgoing_webhook_jobs_due ON outgoing_webhook_jobs (next_attempt_at, id);
