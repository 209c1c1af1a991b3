//! What the server says about itself: version, feature level, authentication methods.

use md5::{Digest, Md5};
use serde_json::{json, Map, Value};

use crate::config::ServerConfig;
use crate::realm::RealmState;
use crate::{json_object, markdown};

/// The Zulip API feature level Agora follows: 498, Zulip 12.0's release level (the
/// differences that remain are listed in `docs/api.md`).
pub const FEATURE_LEVEL: i64 = 498;
/// The Zulip release whose API Agora speaks, as Zulip's `ZULIP_VERSION`: a plain release
/// number that tools parse (`MAJOR.MINOR`).
pub const ZULIP_VERSION: &str = "12.0";
/// Zulip's `zulip_merge_base` for a release: the release itself.
pub const ZULIP_MERGE_BASE: &str = ZULIP_VERSION;
/// Agora's own version. Zulip's responses have no field for it (and clients refuse unknown
/// ones), so it goes in the `Server` header of every response and in the push bouncer's
/// `User-Agent`.
pub const AGORA_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `Server` header of every HTTP response.
pub const SERVER_HEADER: &str = concat!("Agora/", env!("CARGO_PKG_VERSION"));

/// The feature level from which Zulip's `POST /register` says how long the queue may go
/// unpolled (`idle_queue_timeout_secs`).
pub const IDLE_QUEUE_TIMEOUT_LEVEL: i64 = 481;

/// The `zulip_version` clients see: the Zulip release number (Agora names itself in the
/// `Server` header).
pub fn zulip_version() -> String {
    ZULIP_VERSION.to_owned()
}

/// Whether a client's `User-Agent` marks it as one the server cannot serve (Zulip's test
/// hook: the client name `ZulipInvalid`).
pub fn is_incompatible_client(user_agent: &str) -> bool {
    client_name(user_agent) == "ZulipInvalid"
}

/// The client's name: the first word of its `User-Agent` (`ZulipPython/0.9.1 ...` is
/// `ZulipPython`).
pub fn client_name(user_agent: &str) -> &str {
    user_agent.split(['/', ' ']).next().unwrap_or("")
}

/// `GET /server_settings` for the server as a whole; `push_enabled` when it uses a push
/// notification service.
pub fn server_settings(is_incompatible: bool, push_enabled: bool) -> Map<String, Value> {
    json_object(json!({
        "authentication_methods": {
            "password": true, "dev": false, "email": true, "ldap": false, "remoteuser": false,
            "github": false, "discord": false, "azuread": false, "gitlab": false, "google": false,
            "apple": false, "saml": false, "openid connect": false,
        },
        "zulip_version": zulip_version(),
        "zulip_merge_base": ZULIP_MERGE_BASE,
        "zulip_feature_level": FEATURE_LEVEL,
        "push_notifications_enabled": push_enabled,
        "is_incompatible": is_incompatible,
    }))
}

/// Zulip's authentication backends, by the names Zulip's `AUTH_BACKEND_NAME_MAP` gives them
/// (Discord since Zulip 12, feature level 488).
const AUTH_BACKENDS: [&str; 12] = [
    "Dev",
    "Email",
    "LDAP",
    "RemoteUser",
    "GitHub",
    "Discord",
    "AzureAD",
    "GitLab",
    "Google",
    "Apple",
    "SAML",
    "OpenID Connect",
];

/// `realm_authentication_methods`: every backend Zulip has, as a Zulip organization's
/// settings list them. Email and password is the one Agora has; the others are listed as
/// unavailable, with the reason clients show beside them.
pub fn realm_authentication_methods() -> Value {
    let mut methods = Map::new();
    for name in AUTH_BACKENDS {
        let method = if name == "Email" {
            json!({"enabled": true, "available": true})
        } else {
            json!({"enabled": false, "available": false, "unavailable_reason": UNAVAILABLE_BACKEND})
        };
        methods.insert(name.into(), method);
    }
    Value::Object(methods)
}

/// Why an authentication backend other than email and password cannot be enabled.
pub const UNAVAILABLE_BACKEND: &str = "This authentication method is not supported by this server.";

/// The organization's icon: the uploaded one (`/user_avatars/<realm_id>/realm/icon.png`,
/// versioned), else the default, an identicon of its subdomain, as Zulip's.
pub fn realm_icon_url(state: &RealmState) -> String {
    if realm_icon_source(state) == "U" {
        let version = state.realm().settings.get("icon_version").and_then(|v| v.as_i64()).unwrap_or(1);
        return format!("/user_avatars/{}/realm/icon.png?version={version}", state.realm().id.0);
    }
    let hash = Md5::digest(state.realm().subdomain.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("https://secure.gravatar.com/avatar/{hex}?d=identicon")
}

/// `realm_icon_source`: `U` for an uploaded icon, `G` for the default one.
pub fn realm_icon_source(state: &RealmState) -> &str {
    state.realm().settings.get("icon_source").and_then(|v| v.as_str()).unwrap_or("G")
}

impl RealmState {
    /// `GET /server_settings` at this organization's host.
    pub fn server_settings(&self, config: &ServerConfig, is_incompatible: bool) -> Map<String, Value> {
        let mut map = server_settings(is_incompatible, config.push.configured());
        let realm = self.realm();
        let url = config.realm_url(&realm.subdomain);
        map.insert("email_auth_enabled".into(), true.into());
        map.insert("require_email_format_usernames".into(), true.into());
        map.insert("realm_url".into(), url.clone().into());
        map.insert("realm_name".into(), realm.name.clone().into());
        map.insert("realm_icon".into(), realm_icon_url(self).into());
        map.insert("realm_description".into(), markdown::render(&realm.description).into());
        map.insert("realm_web_public_access_enabled".into(), false.into());
        map.insert("external_authentication_methods".into(), Value::Array(Vec::new()));
        map.insert("realm_uri".into(), url.into());
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incompatible_clients_are_named_zulip_invalid() {
        assert!(is_incompatible_client("ZulipInvalid/1.0"));
        assert!(!is_incompatible_client("ZulipPython/0.9.1 (Debian GNU/Linux; 12)"));
        assert!(!is_incompatible_client(""));
    }
}
