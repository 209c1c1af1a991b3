//! Deactivating and reactivating accounts (`DELETE /users/me`, `DELETE /users/{user_id}`,
//! `POST /users/{user_id}/reactivate`).

use std::collections::BTreeMap;

use crate::realm::channels::ops::events::peer_events;
use crate::realm::invite_data::{Invite, InviteStatus};
use crate::realm::invites::ops::invites_changed;
use rusqlite::Transaction;
use serde_json::json;

use super::access::{access_user, is_last_owner, Access, UserRef};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{ChannelId, UserId};
use crate::realm::events::realm_user_update;
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::{commit, Applied, Change};
use crate::store::{self, Store};

/// Longest `deactivation_notification_comment`.
const MAX_DEACTIVATION_COMMENT: usize = 2000;

/// Accounts that become active or inactive: one account, or a human with the active bots
/// they own (a deactivation takes them along, as in Zulip; a reactivation brings back only
/// the account itself).
#[derive(Debug, Clone)]
pub struct AccountStatus {
    active: bool,
    users: Vec<UserId>,
    /// Invitations of deactivated accounts, revoked with them (Zulip's
    /// `revoke_invites_generated_by_user`).
    revoked: Vec<Invite>,
}

/// What else `DELETE /users/{user_id}` does (`actions`, level 459), to the user's bots
/// first, then to the user: rename them "Deleted user" and remove their uploaded avatar,
/// and delete the messages they sent in public channels, in the other channels, or
/// directly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeactivationActions {
    pub delete_profile: bool,
    pub delete_public_channel_messages: bool,
    pub delete_private_channel_messages: bool,
    pub delete_direct_messages: bool,
}

impl AccountStatus {
    /// The accounts it changes: the user, then the bots they own.
    pub fn accounts(&self) -> &[UserId] {
        &self.users
    }
}

/// Plans deactivating (`active: false`) or reactivating an account.
pub fn plan_set_active(state: &RealmState, user_id: UserId, active: bool) -> ApiResult<AccountStatus> {
    let user = state.user_or_err(user_id)?;
    if user.is_active == active {
        return Err(ApiError::bad_request(if active {
            "User is already active"
        } else {
            "User is already deactivated"
        }));
    }
    let mut users = vec![user_id];
    let mut revoked = Vec::new();
    if !active {
        users
            .extend(state.users().filter(|u| u.is_bot && u.is_active && u.bot_owner_id == Some(user_id)).map(|u| u.id));
        revoked = state
            .invites()
            .all()
            .filter(|i| i.status == InviteStatus::Usable && users.contains(&i.referred_by))
            .map(|i| Invite { status: InviteStatus::Revoked, ..i.clone() })
            .collect();
    }
    Ok(AccountStatus { active, users, revoked })
}

/// Plans `DELETE /users/me`: refused for the only active user and the only owner.
pub fn plan_deactivate_own(state: &RealmState, user_id: UserId) -> ApiResult<AccountStatus> {
    let user = state.user_or_err(user_id)?;
    if state.users().filter(|u| u.is_active).count() == 1 {
        return Err(last_user_error(false));
    }
    if is_last_owner(state, user) {
        return Err(last_user_error(true));
    }
    plan_set_active(state, user_id, false)
}

/// Zulip's `CannotDeactivateLastUserError`.
fn last_user_error(is_last_owner: bool) -> ApiError {
    let entity = if is_last_owner { "organization owner" } else { "user" };
    ApiError::new(ErrorCode::CannotDeactivateLastUser, 400, format!("Cannot deactivate the only {entity}."))
        .with("is_last_owner", is_last_owner)
        .with("entity", entity)
}

/// Plans `DELETE /users/{user_id}`: the notification comment (checked as the parameter is
/// parsed, before anything else), then administrators deactivate active humans; only
/// owners deactivate owners, and never the last one.
pub fn plan_deactivate(
    state: &RealmState,
    acting: UserId,
    target: &UserRef,
    comment: Option<&str>,
) -> ApiResult<AccountStatus> {
    check_deactivation_comment(comment)?;
    let acting = state.user_or_err(acting)?;
    let access = Access { allow_deactivated: false, allow_bots: false, for_admin: true };
    let target = access_user(state, acting, target, access)?;
    if target.role == Role::Owner && acting.role != Role::Owner {
        return Err(ApiError::must_be_owner());
    }
    if is_last_owner(state, target) {
        return Err(ApiError::bad_request("Cannot deactivate the only organization owner"));
    }
    plan_set_active(state, target.id, false)
}

/// The `deactivation_notification_comment` of `DELETE /users/{user_id}`.
fn check_deactivation_comment(comment: Option<&str>) -> ApiResult<()> {
    if let Some(comment) = comment {
        ApiError::check_length("deactivation_notification_comment", comment, MAX_DEACTIVATION_COMMENT)?;
    }
    Ok(())
}

/// Plans `POST /users/{user_id}/reactivate`.
pub fn plan_reactivate(state: &RealmState, acting: UserId, target: &UserRef) -> ApiResult<AccountStatus> {
    let acting = state.user_or_err(acting)?;
    let access = Access { allow_deactivated: true, allow_bots: true, for_admin: true };
    let id = access_user(state, acting, target, access)?.id;
    plan_set_active(state, id, true)
}

impl Change for AccountStatus {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        for id in &self.users {
            store::users::set_active(tx, *id, self.active)?;
            if !self.active {
                // A deactivated account's devices and web sessions go with it (a later
                // reactivation does not sign anyone back in).
                store::push::clear_devices(tx, *id, crate::clock::now_micros() / 1000)?;
                store::web_sessions::delete_for_user(tx, *id, None)?;
            }
        }
        for invite in &self.revoked {
            store::invites::set_status(tx, invite.id, invite.status, None)?;
        }
        Ok(())
    }

    /// `realm_user` `update` `is_active` to every active user (the reactivated one
    /// included). Once applied the accounts' API keys stop (or start) working, and the
    /// deactivated accounts' event queues are closed.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let AccountStatus { active, users, revoked } = self;
        let mut events = Vec::with_capacity(users.len() + 1);
        for &id in &users {
            state.set_user_active(id, active);
            tracing::info!(realm.id = %state.realm().id, user.id = %id, active, "changed account status");
            events.push(state.to_everyone(realm_user_update(json!({"user_id": id, "is_active": active}))));
            // Bots: no `realm_bot` event since Zulip 12 (feature level 474): `is_active` is
            // no longer on bot objects, and the bot stays in `realm_bots`.
            // A deactivated user leaves their channels' subscriber lists: `peer_remove`
            // for every channel they are subscribed to, archived ones too since FL 428.
            if !active {
                let channels: BTreeMap<ChannelId, Vec<UserId>> =
                    state.subscribed_channels(id).map(|channel| (channel, vec![id])).collect();
                events.extend(peer_events(state, "peer_remove", &channels));
            }
        }
        if !revoked.is_empty() {
            for invite in revoked {
                state.invites_mut().put(invite);
            }
            events.push(invites_changed(state, None));
        }
        let applied = Applied::events(events).with_auth();
        if active {
            applied
        } else {
            applied.closing_queues_of(users)
        }
    }
}

/// Deactivates or reactivates an account outside any actor (tests).
pub fn set_active(state: &mut RealmState, store: &Store, user_id: UserId, active: bool) -> ApiResult<Applied<()>> {
    let change = plan_set_active(state, user_id, active)?;
    commit(state, store, change)
}
