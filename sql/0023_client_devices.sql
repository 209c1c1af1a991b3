-- Zulip 12's logged-in devices (feature level 468, `Device`): a mobile client registers
-- itself (`POST /register_client_device`), then its push key and its FCM/APNs token
-- (`POST /mobile_push/register`); notifications are encrypted with the key (libsodium's
-- secretbox) and addressed to the bouncer by the token's id. A device goes with its user.
CREATE TABLE client_devices (
    id                                INTEGER PRIMARY KEY AUTOINCREMENT,
    realm_id                          INTEGER NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
    user_id                           INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- The key notifications are encrypted with: a cryptosystem byte (0x31, secretbox), then
    -- the key; and the client's id for it (an unsigned 32-bit integer).
    push_key                          BLOB,
    push_key_id                       INTEGER,
    -- 'fcm' or 'apns'.
    push_token_kind                   TEXT,
    -- The token's id (the first 8 bytes of its SHA-256, big-endian signed): registered at
    -- the bouncer, and being registered.
    push_token_id                     INTEGER,
    pending_push_token_id             INTEGER,
    -- When `pending_push_token_id` last got a new value (seconds since the epoch).
    push_token_last_updated_timestamp INTEGER,
    -- Zulip's error code when the bouncer refused the registration.
    push_registration_error_code      TEXT,
    date_created                      INTEGER NOT NULL
);
CREATE INDEX client_devices_user ON client_devices (user_id);

-- Zulip 12 replaced the prototype end-to-end encrypted registrations (a `push_account_id`
-- and a public key, at the bouncer by its device id) with these devices: the mobile app
-- registers again, and their pending bouncer jobs have nothing left to do.
DELETE FROM push_devices WHERE push_account_id IS NOT NULL;
DELETE FROM push_outbox WHERE kind IN ('e2ee_register', 'e2ee_test');
