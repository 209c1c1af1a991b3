//! User queries answered from the state.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::ops::access::{access_user, Access, UserRef};
use crate::error::{ApiError, ApiResult};
use crate::ids::UserId;
use crate::realm::format::UserDictOptions;
use crate::realm::model::User;
use crate::realm::state::RealmState;

/// `GET /users`: every user of the realm as `viewer` may see them (bots and deactivated
/// users included), or only `user_ids` (in id order), by ascending id; written straight
/// to the JSON array the reply carries.
pub fn list_users(
    state: &RealmState,
    viewer: &User,
    options: UserDictOptions,
    user_ids: Option<&[i64]>,
) -> ApiResult<String> {
    let all = state.user_map();
    let users: Vec<&Arc<User>> = match user_ids {
        None => all.values().collect(),
        Some(ids) => {
            let mut wanted = Vec::with_capacity(ids.len());
            for &id in ids {
                let user = state
                    .user_arc(UserId(id))
                    .ok_or_else(|| ApiError::bad_request(format!("Invalid user ID: {id}")))?;
                wanted.push(user);
            }
            wanted.sort_by_key(|u| u.id);
            wanted.dedup_by_key(|u| u.id);
            wanted
        }
    };
    let mut out = String::with_capacity(users.len() * 400 + 2);
    state.write_users_json(viewer, users.into_iter(), options, true, &mut out);
    Ok(out)
}

/// `GET /users/{id}` and `GET /users/{email}`: one user (deactivated users and bots too)
/// as `viewer` may see it.
pub fn user_dict(
    state: &RealmState,
    viewer: &User,
    target: &UserRef,
    options: UserDictOptions,
) -> ApiResult<Map<String, Value>> {
    let access = Access { allow_deactivated: true, allow_bots: true, for_admin: false };
    let target = access_user(state, viewer, target, access)?;
    Ok(state.user_dict(viewer, target, options))
}
