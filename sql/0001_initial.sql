-- Organizations, accounts and system user groups.
--
-- Applied once, in a transaction, when PRAGMA user_version < 1. Never edit a migration
-- that has landed: add the next numbered file instead.

CREATE TABLE realms (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    -- '' is the root organization, served at the external host itself.
    subdomain       TEXT    NOT NULL UNIQUE,
    name            TEXT    NOT NULL,
    description     TEXT    NOT NULL DEFAULT '',
    -- Organization settings (the realm_* values of /register) as a JSON object; keys that
    -- are absent take their defaults, so adding a setting needs no migration.
    settings        TEXT    NOT NULL DEFAULT '{}',
    -- Defaults of personal settings for users created afterwards, as a JSON object.
    user_defaults   TEXT    NOT NULL DEFAULT '{}',
    deactivated     INTEGER NOT NULL DEFAULT 0,
    date_created    INTEGER NOT NULL
);

CREATE TABLE users (
    id                        INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id                  INTEGER NOT NULL REFERENCES realms(id),
    -- The real address: used to log in and for notifications.
    delivery_email            TEXT    NOT NULL,
    -- The address used in the API: the real one, or user<ID>@<realm domain> when hidden.
    email                     TEXT    NOT NULL,
    full_name                 TEXT    NOT NULL,
    -- 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest.
    role                      INTEGER NOT NULL CHECK (role IN (100, 200, 300, 400, 600)),
    is_active                 INTEGER NOT NULL DEFAULT 1,
    is_bot                    INTEGER NOT NULL DEFAULT 0,
    -- 1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded; NULL for humans.
    bot_type                  INTEGER CHECK (bot_type IS NULL OR bot_type BETWEEN 1 AND 4),
    bot_owner_id              INTEGER REFERENCES users(id),
    timezone                  TEXT    NOT NULL DEFAULT '',
    date_joined               INTEGER NOT NULL,
    -- 'G' gravatar, 'U' uploaded.
    avatar_source             TEXT    NOT NULL DEFAULT 'G',
    avatar_version            INTEGER NOT NULL DEFAULT 1,
    api_key                   TEXT    NOT NULL UNIQUE,
    -- argon2id PHC string; NULL when the account has no usable password (bots).
    password_hash             TEXT,
    can_create_users          INTEGER NOT NULL DEFAULT 0,
    can_change_user_emails    INTEGER NOT NULL DEFAULT 0,
    -- 1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators.
    email_address_visibility  INTEGER NOT NULL DEFAULT 1,
    -- Personal preferences as a JSON object; absent keys take the organization default
    -- recorded when the user was created.
    settings                  TEXT    NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX users_realm_delivery_email ON users (realm_id, delivery_email COLLATE NOCASE);
CREATE UNIQUE INDEX users_realm_email ON users (realm_id, email COLLATE NOCASE);

CREATE TABLE user_groups (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id         INTEGER NOT NULL REFERENCES realms(id),
    name             TEXT    NOT NULL,
    description      TEXT    NOT NULL DEFAULT '',
    is_system_group  INTEGER NOT NULL DEFAULT 0,
    creator_id       INTEGER REFERENCES users(id),
    date_created     INTEGER,
    deactivated      INTEGER NOT NULL DEFAULT 0,
    -- The group's own can_*_group permission settings, as a JSON object.
    settings         TEXT    NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX user_groups_realm_name ON user_groups (realm_id, name);

-- Direct members of a group.
CREATE TABLE user_group_members (
    group_id  INTEGER NOT NULL REFERENCES user_groups(id),
    user_id   INTEGER NOT NULL REFERENCES users(id),
    PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX user_group_members_user ON user_group_members (user_id);

-- Direct subgroups of a group.
CREATE TABLE user_group_subgroups (
    supergroup_id  INTEGER NOT NULL REFERENCES user_groups(id),
    subgroup_id    INTEGER NOT NULL REFERENCES user_groups(id),
    PRIMARY KEY (supergroup_id, subgroup_id)
) WITHOUT ROWID;
