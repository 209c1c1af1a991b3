//! The administrator's commands, planned from the state with the API's own plans and
//! changes wherever the API has them (so the same events go out), and the few changes
//! only an administrator makes (a password set for someone).

use rusqlite::Transaction;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::Committer;
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, UserId};
use crate::realm::invites::links::{plan_link, plan_revoke_link};
use crate::realm::invites::InviteRequest;
use crate::realm::model::{Role, User};
use crate::realm::settings::organization::{plan_realm_settings, realm_group_settings, realm_settings, wire, Wire};
use crate::realm::settings::SettingValue;
use crate::realm::state::RealmState;
use crate::realm::users::create::plan_new_api_key;
use crate::realm::users::ops::{is_last_owner, plan_role, plan_set_active};
use crate::realm::{Applied, Change};
use crate::store;

/// A command on one organization. Users are named by id or by real email address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum AdminOp {
    /// Every account, humans and bots, active or not.
    ListUsers,
    /// A new role (its wire value).
    ChangeRole { user: String, role: i64 },
    /// Deactivates (with the bots the user owns) or reactivates an account.
    SetActive { user: String, active: bool },
    /// A new API key: the old one stops working at once.
    ResetApiKey { user: String },
    /// A new password, hashed by the caller.
    SetPassword { user: String, password_hash: String },
    /// Organization settings as `name` and value text, decoded as `PATCH /realm` decodes
    /// its parameters (group-valued settings take a group id, a group's name or an
    /// anonymous group's JSON).
    UpdateSettings { settings: Vec<(String, String)> },
    /// A reusable invitation link for new users of `role`, subscribed to `channels` (names
    /// or ids) and, with `include_default_channels`, to the default channels; expiring
    /// after `expires_in_minutes` (the server's invitation validity without it), or never.
    CreateInviteLink {
        role: i64,
        channels: Vec<String>,
        include_default_channels: bool,
        expires_in_minutes: Option<i64>,
        never_expires: bool,
    },
    /// Revokes a reusable invitation link.
    RevokeInviteLink { id: i64 },
}

/// Runs a command; the JSON object it prints.
pub fn execute(c: &mut impl Committer, op: AdminOp, now: i64) -> ApiResult<Value> {
    match op {
        AdminOp::ListUsers => Ok(json!({"users": c.state().users().map(listed).collect::<Vec<_>>()})),
        AdminOp::ChangeRole { user, role } => {
            let role = Role::from_i64(role).ok_or_else(|| ApiError::bad_request(format!("Invalid role {role}")))?;
            let (id, old) = find_user(c.state(), &user).map(|u| (u.id, u.role))?;
            let change = plan_role(c.state(), id, role, now)?;
            c.commit(change)?;
            Ok(json!({"user_id": id, "old_role": role_name(old), "role": role_name(role)}))
        }
        AdminOp::SetActive { user, active } => {
            let target = find_user(c.state(), &user)?;
            if !active && is_last_owner(c.state(), target) {
                return Err(ApiError::bad_request("Cannot deactivate the only organization owner"));
            }
            let id = target.id;
            let change = plan_set_active(c.state(), id, active)?;
            c.commit(change)?;
            Ok(json!({"user_id": id, "is_active": active}))
        }
        AdminOp::ResetApiKey { user } => {
            let id = find_user(c.state(), &user)?.id;
            let change = plan_new_api_key(c.state(), id)?;
            let api_key = c.commit(change)?;
            Ok(json!({"user_id": id, "api_key": api_key}))
        }
        AdminOp::SetPassword { user, password_hash } => {
            let target = find_user(c.state(), &user)?;
            if target.is_bot {
                return Err(ApiError::bad_request("Bots log in with their API key, not a password"));
            }
            let id = target.id;
            c.commit(NewPassword { user_id: id, hash: password_hash })?;
            Ok(json!({"user_id": id}))
        }
        AdminOp::UpdateSettings { settings } => {
            let owner = first_owner(c.state())?;
            let (settings, groups) = decode_settings(c.state(), settings)?;
            let change = plan_realm_settings(c.state(), owner, settings, groups, now)?;
            let changed = c.commit(change)?;
            Ok(json!({"realm_id": c.state().realm().id, "changed": changed}))
        }
        AdminOp::CreateInviteLink { role, channels, include_default_channels, expires_in_minutes, never_expires } => {
            let (owner, invite_as, stream_ids) = check_invite_link(c.state(), role, &channels, expires_in_minutes)?;
            let expires_in_minutes =
                (!never_expires).then(|| expires_in_minutes.unwrap_or(c.config().invites.validity_minutes));
            let request = InviteRequest {
                emails_raw: String::new(),
                expires_in_minutes,
                invite_as,
                stream_ids: stream_ids.iter().map(|id| id.0).collect(),
                group_ids: None,
                include_realm_default_subscriptions: include_default_channels,
                notify_referrer_on_join: false,
                welcome_message_custom_text: None,
            };
            let change = plan_link(c.state(), c.config(), owner, &request, now)?;
            let link = c.commit(change)?;
            // The link ends with its key: `.../join/<key>/`.
            let key = link.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
            let invite = c.state().invites().by_key(key).map(|i| i.id);
            Ok(json!({"invite_id": invite, "link": link, "expires_in_minutes": expires_in_minutes}))
        }
        AdminOp::RevokeInviteLink { id } => {
            let owner = first_owner(c.state())?;
            let change = plan_revoke_link(c.state(), owner, id)?;
            c.commit(change)?;
            Ok(json!({"invite_id": id, "revoked": true}))
        }
    }
}

/// The name a role is shown and given by.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Owner => "owner",
        Role::Administrator => "administrator",
        Role::Moderator => "moderator",
        Role::Member => "member",
        Role::Guest => "guest",
    }
}

/// One account as `list-users` prints it.
fn listed(user: &User) -> Value {
    json!({
        "user_id": user.id,
        "email": user.delivery_email,
        "full_name": user.full_name,
        "role": role_name(user.role),
        "is_active": user.is_active,
        "is_bot": user.is_bot,
        "bot_owner_id": user.bot_owner_id,
        "date_joined": user.date_joined,
    })
}

/// A user by id (digits) or by real email address (any case).
fn find_user<'s>(state: &'s RealmState, user: &str) -> ApiResult<&'s User> {
    let user = user.trim();
    let found = match user.parse::<i64>() {
        Ok(id) => state.user(UserId(id)),
        Err(_) => state.user_by_delivery_email(user).or_else(|| state.user_by_api_email(user)),
    };
    found.ok_or_else(|| ApiError::bad_request(format!("No such user: {user}")))
}

/// The organization's first active owner: commands that go through a plan made for an
/// acting user (organization settings) act with an owner's rights.
fn first_owner(state: &RealmState) -> ApiResult<UserId> {
    state
        .users()
        .filter(|u| u.is_active && !u.is_bot && u.role == Role::Owner)
        .map(|u| u.id)
        .min()
        .ok_or_else(|| ApiError::bad_request("The organization has no active owner"))
}

/// Decodes `name`/text pairs as `PATCH /realm` decodes its parameters.
fn decode_settings(
    state: &RealmState,
    given: Vec<(String, String)>,
) -> ApiResult<(Vec<SettingValue>, Vec<SettingValue>)> {
    let (mut settings, mut groups) = (Vec::new(), Vec::new());
    for (name, raw) in given {
        let invalid = || ApiError::bad_request(format!("Invalid {name}"));
        if let Some(setting) = realm_settings().find(|s| s.name == name) {
            let value = match wire(setting) {
                Wire::Bool => Value::Bool(raw.trim().parse().map_err(|_| invalid())?),
                Wire::Int => Value::from(raw.trim().parse::<i64>().map_err(|_| invalid())?),
                Wire::Str => Value::String(raw),
                // JSON, or (for the shell's convenience) an unquoted string.
                Wire::Json => serde_json::from_str(&raw).unwrap_or(Value::String(raw)),
            };
            settings.push((setting, value));
        } else if let Some(setting) = realm_group_settings().find(|s| s.name == name) {
            let value = match serde_json::from_str::<Value>(&raw) {
                Ok(v @ (Value::Number(_) | Value::Object(_))) => v,
                _ => {
                    let group = state.groups().find(|g| g.name == raw.trim() && !g.deactivated).ok_or_else(invalid)?;
                    Value::from(group.id.0)
                }
            };
            groups.push((setting, json!({"new": value})));
        } else {
            return Err(ApiError::bad_request(format!("Unknown organization setting: {name}")));
        }
    }
    Ok((settings, groups))
}

/// What an invitation link needs before the invitations' own checks: a role, channels
/// that exist (by name or id), a positive lifetime, and an owner to invite in the
/// organization's name.
fn check_invite_link(
    state: &RealmState,
    role: i64,
    channels: &[String],
    expires_in_minutes: Option<i64>,
) -> ApiResult<(UserId, Role, Vec<ChannelId>)> {
    let role = Role::from_i64(role).ok_or_else(|| ApiError::bad_request(format!("Invalid role {role}")))?;
    let mut ids = Vec::with_capacity(channels.len());
    for name in channels {
        let channel = match name.parse::<i64>() {
            Ok(id) => state.channel(ChannelId(id)),
            Err(_) => state.channel_by_name(name),
        };
        let channel = channel
            .filter(|c| !c.is_archived)
            .ok_or_else(|| ApiError::bad_request(format!("Invalid channel: {name}")))?;
        ids.push(channel.id);
    }
    if expires_in_minutes.is_some_and(|m| m <= 0) {
        return Err(ApiError::bad_request("expires_in_minutes must be positive"));
    }
    Ok((first_owner(state)?, role, ids))
}

/// A password set by the administrator.
#[derive(Debug, Clone)]
pub struct NewPassword {
    user_id: UserId,
    hash: String,
}

impl Change for NewPassword {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::users::set_password_hash(tx, self.user_id, Some(&self.hash))?;
        Ok(())
    }

    /// No event (Zulip sends none for a password change); the login index takes the hash.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        if let Some(user) = state.user_mut(self.user_id) {
            user.password_hash = Some(self.hash);
        }
        tracing::info!(realm.id = %state.realm().id, user.id = %self.user_id, "administrator set a password");
        Applied::new((), Vec::new()).with_auth()
    }
}
