-- Zulip 12's user changes (feature levels 433, 455, 475).

-- FL 433: a placeholder account made by an import from another chat system (Zulip's
-- `UserProfile.is_imported_stub`), until its owner logs in for the first time.
ALTER TABLE users ADD COLUMN is_imported_stub INTEGER NOT NULL DEFAULT 0;
-- FL 475: `date_joined` becomes the time of the first login (imported stubs, accounts
-- created through `POST /users`); 1 until that login.
ALTER TABLE users ADD COLUMN first_login_pending INTEGER NOT NULL DEFAULT 0;
-- FL 444: the personal settings a user changed themselves (a JSON array of names), which
-- an administrator's `PATCH /settings` with `skip_if_already_edited` leaves alone (Zulip
-- reads its audit log for this).
ALTER TABLE users ADD COLUMN self_edited_settings TEXT NOT NULL DEFAULT '[]';

-- FL 455: whether typeahead matches users by this field's values.
ALTER TABLE custom_profile_fields ADD COLUMN use_for_user_matching INTEGER NOT NULL DEFAULT 0;
