-- Linkifiers (Zulip's RealmFilter): patterns whose matches in messages and topics become
-- links. `sort_order` is the order they are applied and listed in (Zulip's `order`).

CREATE TABLE realm_linkifiers (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id     INTEGER NOT NULL REFERENCES realms(id),
    pattern      TEXT    NOT NULL,
    url_template TEXT    NOT NULL,
    sort_order   INTEGER NOT NULL DEFAULT 0,
    UNIQUE (realm_id, pattern)
);
