-- Invitations (Zulip's PreregistrationUser and MultiuseInvite with their Confirmation),
-- outgoing mail (a durable outbox drained by the mail worker) and the system bots of each
-- organization (Zulip's cross-realm bots).

-- An invitation: by email (`multiuse` 0, one account, `email` set) or a reusable link
-- (`multiuse` 1, any number of accounts, `email` NULL). The link carries `key`.
CREATE TABLE invites (
    id                                   INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id                             INTEGER NOT NULL REFERENCES realms(id),
    multiuse                             INTEGER NOT NULL DEFAULT 0,
    email                                TEXT,
    referred_by                          INTEGER NOT NULL REFERENCES users(id),
    -- 100 owner ... 600 guest: the role of the accounts it creates.
    invited_as                           INTEGER NOT NULL,
    -- JSON lists of channel and user group ids to join.
    stream_ids                           TEXT    NOT NULL DEFAULT '[]',
    group_ids                            TEXT    NOT NULL DEFAULT '[]',
    include_realm_default_subscriptions  INTEGER NOT NULL DEFAULT 0,
    notify_referrer_on_join              INTEGER NOT NULL DEFAULT 1,
    -- NULL: the organization's text; '': no custom message.
    welcome_message_custom_text          TEXT,
    -- When it was created or last mailed (seconds since the epoch).
    invited_at                           INTEGER NOT NULL,
    -- NULL: never expires.
    expiry_date                          INTEGER,
    -- The confirmation key of the link (24 characters of [a-z2-7]).
    confirmation_key                     TEXT    NOT NULL UNIQUE,
    -- 0 usable, 1 used (single-use invitations), 2 revoked.
    status                               INTEGER NOT NULL DEFAULT 0,
    -- The last account it created.
    created_user                         INTEGER REFERENCES users(id)
);
CREATE INDEX invites_realm ON invites (realm_id, id);

-- Each invitation mail sent (sends and resends), for the daily limit.
CREATE TABLE invite_sends (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id  INTEGER NOT NULL REFERENCES realms(id),
    sent_at   INTEGER NOT NULL
);
CREATE INDEX invite_sends_realm ON invite_sends (realm_id, sent_at);

-- Mail waiting to go out, written in the same transaction as what it tells about, so that
-- nothing committed is ever without its mail. The mail worker sends what is due and marks
-- it sent; a failure is retried later with a growing delay.
CREATE TABLE outbox (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id         INTEGER REFERENCES realms(id),
    -- What kind of mail (`invitation`), for logs.
    kind             TEXT    NOT NULL,
    to_address       TEXT    NOT NULL,
    -- The display name of the sender (the organization), the subject and the plain text.
    from_name        TEXT    NOT NULL,
    subject          TEXT    NOT NULL,
    body             TEXT    NOT NULL,
    -- The Message-ID header, fixed when queued: a retry of a mail that did get through
    -- carries the same one, so it can be recognised as the same mail.
    message_id       TEXT    NOT NULL UNIQUE,
    created_at       INTEGER NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,
    -- 0 pending, 1 sent, 2 given up (after the last attempt; logged as an error).
    status           INTEGER NOT NULL DEFAULT 0,
    sent_at          INTEGER,
    last_error       TEXT
);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);

-- Zulip's cross-realm bots, one copy in each organization: they post what the server has
-- to say (Notification Bot, Welcome Bot). Bots without an owner whose address is one of
-- these are system bots; they are not listed among the organization's users.
INSERT INTO users (realm_id, delivery_email, email, full_name, role, is_active, is_bot, bot_type,
                   date_joined, api_key)
SELECT r.id, b.email, b.email, b.name, 400, 1, 1, 1, r.date_created, lower(hex(randomblob(16)))
FROM realms r
CROSS JOIN (SELECT 'emailgateway@zulip.com' AS email, 'Email Gateway' AS name
            UNION ALL SELECT 'notification-bot@zulip.com', 'Notification Bot'
            UNION ALL SELECT 'welcome-bot@zulip.com', 'Welcome Bot') b
WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.realm_id = r.id AND u.delivery_email = b.email COLLATE NOCASE);
