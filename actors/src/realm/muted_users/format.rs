//! A user's mutes as the API shows them.

use serde_json::{json, Value};

use crate::ids::UserId;
use crate::realm::state::RealmState;

/// `user`'s mutes as the `muted_users` data set and event show them: `id` and
/// `timestamp`, in the order they were made (Zulip's `get_user_mutes`).
pub fn muted_users_list(state: &RealmState, user: UserId) -> Value {
    state.user_data().mutes(user).iter().map(|m| json!({"id": m.muted_user_id, "timestamp": m.date_muted})).collect()
}
