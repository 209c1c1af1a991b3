-- Custom profile fields and their values (spec 2.12, 4.11).

CREATE TABLE custom_profile_fields (
    id                          INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id                    INTEGER NOT NULL REFERENCES realms(id),
    name                        TEXT    NOT NULL,
    hint                        TEXT    NOT NULL DEFAULT '',
    -- 1 short text, 2 long text, 3 list of options, 4 date, 5 link, 6 person picker,
    -- 7 external account, 8 pronouns.
    field_type                  INTEGER NOT NULL CHECK (field_type BETWEEN 1 AND 8),
    -- JSON text as the API shows it ("" when the type has none).
    field_data                  TEXT    NOT NULL DEFAULT '',
    -- Position in the organization's list (1-based, as Zulip's `order`).
    sort_order                  INTEGER NOT NULL,
    display_in_profile_summary  INTEGER NOT NULL DEFAULT 0,
    required                    INTEGER NOT NULL DEFAULT 0,
    editable_by_user            INTEGER NOT NULL DEFAULT 1,
    -- Labels are unique within an organization (compared exactly, as Zulip does).
    UNIQUE (realm_id, name)
);
CREATE INDEX custom_profile_fields_realm ON custom_profile_fields (realm_id, sort_order);

-- One user's value of one field.
CREATE TABLE custom_profile_field_values (
    user_id         INTEGER NOT NULL REFERENCES users(id),
    field_id        INTEGER NOT NULL REFERENCES custom_profile_fields(id) ON DELETE CASCADE,
    value           TEXT    NOT NULL,
    -- HTML for the Markdown-capable types (short and long text); NULL otherwise.
    rendered_value  TEXT,
    PRIMARY KEY (user_id, field_id)
) WITHOUT ROWID;
CREATE INDEX custom_profile_field_values_field ON custom_profile_field_values (field_id);
