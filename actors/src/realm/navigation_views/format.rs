//! Navigation views as the API shows them (Zulip's `get_navigation_view_dict`).

use serde_json::{json, Value};

use crate::ids::UserId;
use crate::realm::state::RealmState;
use crate::realm::user_data::NavigationView;

/// `{fragment, is_pinned, name}` (`name` null for built-in views).
pub fn navigation_view_dict(view: &NavigationView) -> Value {
    json!({"fragment": view.fragment, "is_pinned": view.is_pinned, "name": view.name})
}

/// `user`'s views, in the order they were added: `GET /navigation_views` and the
/// `navigation_views` data set.
pub fn navigation_views_list(state: &RealmState, user: UserId) -> Value {
    state.user_data().navigation_views(user).iter().map(navigation_view_dict).collect()
}
