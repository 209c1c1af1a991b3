//! User objects as the API shows them (spec 2.3; Zulip's `format_user_row`).

use chrono::{DateTime, Datelike, Timelike};
use md5::{Digest, Md5};
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::model::{EmailVisibility, Role, User, UserGroup};
use super::state::RealmState;
use crate::ids::UserId;
use crate::json_object;
pub use crate::uploads::names::avatar_path;

/// Options of a user listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserDictOptions {
    /// The client computes gravatar URLs itself, so `avatar_url` may be null.
    pub client_gravatar: bool,
    /// Include `profile_data` for human users.
    pub include_custom_profile_fields: bool,
}

/// A user object (spec 2.3; Zulip's `APIUserDict`), in Zulip's key order.
#[derive(Debug, Serialize)]
pub struct UserView<'a> {
    pub email: &'a str,
    pub user_id: UserId,
    pub avatar_version: i64,
    pub is_admin: bool,
    pub is_owner: bool,
    pub is_guest: bool,
    pub role: i64,
    pub is_bot: bool,
    pub full_name: &'a str,
    pub timezone: &'a str,
    /// `None` where Zulip leaves it out (register's user lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
    pub date_joined: String,
    /// `null` when the viewer may not see the real address.
    pub delivery_email: Option<&'a str>,
    /// A placeholder made by an import (FL 433).
    pub is_imported_stub: bool,
    /// `null` when the client computes the gravatar itself.
    pub avatar_url: Option<String>,
    /// Bots only (their value may be null).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot_type: Option<Option<i64>>,
    /// System bots only (`true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_system_bot: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot_owner_id: Option<Option<UserId>>,
    /// Humans, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_data: Option<Map<String, Value>>,
}

/// `date_joined` as Zulip prints it: ISO 8601 to the minute, UTC offset spelled out.
pub fn format_date_joined(unix_seconds: i64) -> String {
    // Formatted by hand: chrono's `format` parses its pattern on every call, which shows
    // in user listings of thousands.
    DateTime::from_timestamp(unix_seconds, 0)
        .map(|t| format!("{:04}-{:02}-{:02}T{:02}:{:02}+00:00", t.year(), t.month(), t.day(), t.hour(), t.minute()))
        .unwrap_or_default()
}

/// The URL of a user's avatar, versioned so clients refetch after a change: the uploaded
/// one (`/user_avatars/...`), else the gravatar.
pub fn avatar_url(user: &User) -> String {
    match user.avatar_source.as_str() {
        "U" => format!("/user_avatars/{}.png?version={}", avatar_path(user.realm_id, user.id), user.avatar_version),
        "J" => format!("/user_avatars/{}.png?version={}", jdenticon_path(user), user.avatar_version),
        _ => gravatar_url(user, ""),
    }
}

/// The avatar at Zulip's medium size (500 pixels).
pub fn avatar_url_medium(user: &User) -> String {
    match user.avatar_source.as_str() {
        "U" => {
            format!("/user_avatars/{}-medium.png?version={}", avatar_path(user.realm_id, user.id), user.avatar_version)
        }
        "J" => format!("/user_avatars/{}-medium.png?version={}", jdenticon_path(user), user.avatar_version),
        _ => gravatar_url(user, "&s=500"),
    }
}

/// Where a Jdenticon avatar is served (drawn on request: see the server's `/user_avatars`).
fn jdenticon_path(user: &User) -> String {
    format!("{}/jdenticon/{}", user.realm_id.0, user.id.0)
}

fn gravatar_url(user: &User, size: &str) -> String {
    let hash = Md5::digest(user.delivery_email.to_lowercase().as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("https://secure.gravatar.com/avatar/{hex}?d=identicon{size}&version={}", user.avatar_version)
}

/// Whether `viewer` may see `target`'s real email address (Zulip's
/// `can_access_delivery_email`).
pub fn can_access_delivery_email(viewer: &User, target: &User) -> bool {
    if viewer.id == target.id {
        return true;
    }
    match target.email_address_visibility {
        EmailVisibility::Everyone => true,
        EmailVisibility::Members => viewer.role != Role::Guest,
        EmailVisibility::Moderators => viewer.role.is_moderator_or_above(),
        EmailVisibility::Administrators => viewer.role.is_admin(),
        EmailVisibility::Nobody => false,
    }
}

impl RealmState {
    /// A user group as `realm_user_groups` and `user_group` events show it. Settings a
    /// group does not set are `role:nobody`; deactivated users are not shown as members.
    pub fn group_dict(&self, group: &UserGroup) -> Map<String, Value> {
        let setting = |name: &str| self.group_setting_api_value(&self.group_setting_of(group, name)).to_json();
        let members: Vec<_> = group.members.iter().filter(|u| self.is_active_user(**u)).collect();
        json_object(json!({
            "id": group.id,
            "name": group.name,
            "creator_id": group.creator_id,
            "date_created": group.date_created,
            "description": group.description,
            "members": members,
            "direct_subgroup_ids": group.subgroups,
            "is_system_group": group.is_system_group,
            "can_add_members_group": setting("can_add_members_group"),
            "can_join_group": setting("can_join_group"),
            "can_leave_group": setting("can_leave_group"),
            "can_manage_group": setting("can_manage_group"),
            "can_mention_group": setting("can_mention_group"),
            "can_remove_members_group": setting("can_remove_members_group"),
            "deactivated": group.deactivated,
        }))
    }

    /// `target` as `viewer` may see it, ready to serialize (no intermediate JSON values).
    pub fn user_view<'a>(&self, viewer: &User, target: &'a User, opts: UserDictOptions) -> UserView<'a> {
        let delivery_email =
            (target.is_bot || can_access_delivery_email(viewer, target)).then_some(target.delivery_email.as_str());
        // A client can only compute a gravatar from the API email when that is the real one.
        let gravatar_computable = opts.client_gravatar
            && target.avatar_source == "G"
            && target.email_address_visibility == EmailVisibility::Everyone;
        UserView {
            email: &target.email,
            user_id: target.id,
            avatar_version: target.avatar_version,
            is_admin: target.role.is_admin(),
            is_owner: target.role == Role::Owner,
            is_guest: target.role == Role::Guest,
            role: target.role.as_i64(),
            is_bot: target.is_bot,
            full_name: &target.full_name,
            timezone: &target.timezone,
            is_active: Some(target.is_active),
            date_joined: format_date_joined(target.date_joined),
            delivery_email,
            is_imported_stub: target.is_imported_stub,
            avatar_url: (!gravatar_computable).then(|| avatar_url(target)),
            bot_type: target.is_bot.then_some(target.bot_type),
            is_system_bot: target.is_system_bot().then_some(true),
            bot_owner_id: target.is_bot.then_some(target.bot_owner_id),
            profile_data: (!target.is_bot && opts.include_custom_profile_fields).then(|| profile_data_dict(target)),
        }
    }

    /// `target` as `viewer` may see it, as a JSON object.
    pub fn user_dict(&self, viewer: &User, target: &User, opts: UserDictOptions) -> Map<String, Value> {
        match serde_json::to_value(self.user_view(viewer, target, opts)) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// `cross_realm_bots` of `POST /register`: the system bots, by full name.
    pub fn cross_realm_bots(&self, viewer: &User) -> Vec<Value> {
        let opts = UserDictOptions { client_gravatar: false, include_custom_profile_fields: false };
        let mut bots: Vec<&User> = self.system_bots().collect();
        bots.sort_by(|a, b| a.full_name.cmp(&b.full_name));
        bots.into_iter().map(|bot| Value::Object(self.user_dict(viewer, bot, opts))).collect()
    }

    /// `GET /users/me`: the user's own object with every field, plus `max_message_id`.
    pub fn own_profile(&self, user: &User, max_message_id: i64) -> Map<String, Value> {
        let opts = UserDictOptions { client_gravatar: false, include_custom_profile_fields: true };
        let mut dict = self.user_dict(user, user, opts);
        dict.insert("max_message_id".into(), Value::from(max_message_id));
        dict
    }
}

/// A user's values as `profile_data` of user objects: `{"<field id>": {"value": ..}}`, with
/// `rendered_value` for the Markdown types. Fields without a value are absent.
pub fn profile_data_dict(user: &User) -> Map<String, Value> {
    user.profile_data
        .iter()
        .map(|(id, v)| {
            let mut entry = json!({ "value": v.value });
            if let Some(rendered) = &v.rendered_value {
                entry["rendered_value"] = Value::from(rendered.as_str());
            }
            (id.0.to_string(), entry)
        })
        .collect()
}

/// A user's API email: the real address when everyone may see it, else `user<ID>@<domain>`.
pub fn api_email(config: &crate::config::ServerConfig, realm: &super::model::Realm, user: &User) -> String {
    api_email_in(&config.fake_email_domain(&realm.subdomain), user)
}

/// [`api_email`] with the organization's domain of hidden addresses.
pub fn api_email_in(domain: &str, user: &User) -> String {
    match user.email_address_visibility {
        EmailVisibility::Everyone => user.delivery_email.clone(),
        _ => format!("user{}@{domain}", user.id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(id: i64, role: Role, visibility: EmailVisibility) -> User {
        User {
            id: crate::ids::UserId(id),
            realm_id: crate::ids::RealmId(1),
            delivery_email: format!("u{id}@acme.test"),
            email: format!("user{id}@acme.test"),
            full_name: format!("User {id}"),
            role,
            is_active: true,
            is_bot: false,
            bot_type: None,
            bot_owner_id: None,
            timezone: String::new(),
            date_joined: 0,
            avatar_source: "G".into(),
            avatar_version: 1,
            api_key: String::new(),
            password_hash: None,
            can_create_users: false,
            can_change_user_emails: false,
            email_address_visibility: visibility,
            settings: Map::new(),
            profile_data: Default::default(),
            is_imported_stub: false,
            first_login_pending: false,
            self_edited_settings: Default::default(),
        }
    }

    /// Each visibility against each viewer role: who sees the real address.
    #[test]
    fn email_visibility_matrix() {
        use EmailVisibility::*;
        // Viewer roles in the order of `Role::ALL`: owner, administrator, moderator,
        // member, guest.
        let matrix = [
            (Everyone, [true, true, true, true, true]),
            (Members, [true, true, true, true, false]),
            (Moderators, [true, true, true, false, false]),
            (Administrators, [true, true, false, false, false]),
            (Nobody, [false, false, false, false, false]),
        ];
        for (visibility, expected) in matrix {
            let target = user(1, Role::Member, visibility);
            for (role, sees) in Role::ALL.into_iter().zip(expected) {
                let viewer = user(2, role, Everyone);
                assert_eq!(can_access_delivery_email(&viewer, &target), sees, "{visibility:?} seen by {role:?}");
            }
            // Everyone sees their own address.
            assert!(can_access_delivery_email(&target, &target));
        }
    }

    #[test]
    fn dates_are_printed_to_the_minute() {
        assert_eq!(format_date_joined(1_795_238_460), "2026-11-21T05:21+00:00");
    }
}
