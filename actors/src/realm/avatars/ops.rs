//! Changing a user's avatar, planned from the state, written, applied.

use rusqlite::Transaction;
use serde_json::json;

use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::realm::events::realm_user_update;
use crate::realm::format::{avatar_url, avatar_url_medium};
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

/// Zulip's `MAX_AVATAR_FILE_SIZE_MIB`.
pub const MAX_AVATAR_FILE_SIZE_MIB: u64 = 5;

/// Whether `user_id` may change their avatar: not when the organization turned avatar
/// changes off (`avatar_changes_disabled`), unless an administrator.
pub fn check_may_change(state: &RealmState, user_id: UserId) -> ApiResult<&User> {
    let user = state.user_or_err(user_id)?;
    let disabled = state.realm().settings.get("avatar_changes_disabled").and_then(|v| v.as_bool()).unwrap_or(false);
    if disabled && !user.role.is_admin() {
        return Err(ApiError::bad_request("Avatar changes are disabled in this organization."));
    }
    Ok(user)
}

/// A planned avatar change.
#[derive(Debug)]
pub struct AvatarChange {
    user: User,
    /// Nothing to change (removing an avatar that was never uploaded).
    unchanged: bool,
}

/// Plans a change to an uploaded avatar (`uploaded`) or back to the organization's
/// default one (Gravatar or Jdenticon): the source is set and the version bumped.
/// Removing an avatar that was never uploaded changes nothing (idempotent since FL 443).
pub fn plan_change(state: &RealmState, user_id: UserId, uploaded: bool) -> ApiResult<AvatarChange> {
    let mut user = check_may_change(state, user_id)?.clone();
    if !uploaded && user.avatar_source != "U" {
        return Ok(AvatarChange { user, unchanged: true });
    }
    user.avatar_source =
        if uploaded { "U".to_owned() } else { crate::realm::catalog::default_avatar_source(state.realm()) };
    user.avatar_version += 1;
    Ok(AvatarChange { user, unchanged: false })
}

/// Removes an uploaded avatar, by an administrator (no setting stops them): back to the
/// organization's default avatar. `None` when the user has no uploaded avatar.
pub fn plan_remove(state: &RealmState, user_id: UserId) -> ApiResult<Option<AvatarChange>> {
    let user = state.user_or_err(user_id)?;
    if user.avatar_source != "U" {
        return Ok(None);
    }
    let mut user = user.clone();
    user.avatar_source = crate::realm::catalog::default_avatar_source(state.realm());
    user.avatar_version += 1;
    Ok(Some(AvatarChange { user, unchanged: false }))
}

impl Change for AvatarChange {
    type Output = String;

    fn writes(&self) -> bool {
        !self.unchanged
    }

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        store::attachments::set_avatar(tx, self.user.id, &self.user.avatar_source, self.user.avatar_version)?;
        Ok(())
    }

    /// The new `avatar_url`; `realm_user` `update` with the avatar fields to everyone.
    fn apply(self, state: &mut RealmState) -> Applied<String> {
        let user = self.user;
        let url = avatar_url(&user);
        if self.unchanged {
            return Applied::new(url, Vec::new());
        }
        let person = json!({
            "user_id": user.id,
            "avatar_source": user.avatar_source,
            "avatar_url": url,
            "avatar_url_medium": avatar_url_medium(&user),
            "avatar_version": user.avatar_version,
        });
        let event = state.to_everyone(realm_user_update(person));
        state.put_user(user);
        Applied::new(url, vec![event])
    }
}
