//! Adding, changing and removing navigation views (Zulip's `zerver/views/navigation_views.py`
//! and `zerver/actions/navigation_views.py`), planned from the state, written, applied.

use rusqlite::Transaction;
use serde_json::{json, Map, Value};

use super::format::navigation_view_dict;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{RealmId, UserId};
use crate::realm::state::RealmState;
use crate::realm::user_data::NavigationView;
use crate::realm::{Applied, Change};
use crate::store;

/// The views every client has (Zulip's `BUILT_IN_VIEW_FRAGMENTS`): a user may pin or hide
/// them, not name them.
pub const BUILT_IN_VIEW_FRAGMENTS: [&str; 7] =
    ["inbox", "recent", "feed", "drafts", "narrow/has/reaction/sender/me", "narrow/is/mentioned", "narrow/is/starred"];

fn is_built_in(fragment: &str) -> bool {
    BUILT_IN_VIEW_FRAGMENTS.contains(&fragment)
}

fn already_exists() -> ApiError {
    ApiError::bad_request("Navigation view already exists.")
}

/// "Navigation view does not exist." (404). The spec (section 7) gives it the code
/// `NOT_FOUND`, as Zulip's API documentation shows it; Zulip's code sends `BAD_REQUEST`.
fn no_such_view() -> ApiError {
    ApiError::new(ErrorCode::NotFound, 404, "Navigation view does not exist.")
}

fn built_in_named() -> ApiError {
    ApiError::bad_request("Built-in views cannot have a custom name.")
}

/// Whether `user` has a view called `name`.
fn name_taken(state: &RealmState, user: UserId, name: &str) -> bool {
    state.user_data().navigation_views(user).iter().any(|v| v.name.as_deref() == Some(name))
}

/// A planned change of one of a user's navigation views.
#[derive(Debug, Clone)]
pub enum ViewChange {
    Add { realm_id: RealmId, user_id: UserId, view: NavigationView },
    Update { user_id: UserId, view: NavigationView, data: Map<String, Value> },
    Remove { user_id: UserId, fragment: String },
}

/// Plans `POST /navigation_views` (`fragment` and `name` already stripped and not blank):
/// built-in views take no name, custom ones need one; neither the fragment nor the name
/// may be one of the user's views already.
pub fn plan_add(
    state: &RealmState,
    user_id: UserId,
    fragment: String,
    is_pinned: bool,
    name: Option<String>,
) -> ApiResult<ViewChange> {
    let user = state.user_or_err(user_id)?;
    if is_built_in(&fragment) {
        if name.is_some() {
            return Err(built_in_named());
        }
    } else if name.as_deref().is_none_or(str::is_empty) {
        return Err(ApiError::bad_request("Custom views must have a valid name."));
    }
    if state.user_data().navigation_view(user.id, &fragment).is_some() {
        return Err(already_exists());
    }
    if name.as_deref().is_some_and(|n| name_taken(state, user.id, n)) {
        return Err(already_exists());
    }
    let view = NavigationView { fragment, is_pinned, name };
    Ok(ViewChange::Add { realm_id: state.realm().id, user_id: user.id, view })
}

/// Plans `PATCH /navigation_views/{fragment}` (`name` already stripped and not blank), in
/// Zulip's order: no name for a built-in view, no name the user already uses, then the
/// view must exist.
pub fn plan_update(
    state: &RealmState,
    user_id: UserId,
    fragment: &str,
    is_pinned: Option<bool>,
    name: Option<String>,
) -> ApiResult<ViewChange> {
    let user = state.user_or_err(user_id)?;
    if is_built_in(fragment) && name.is_some() {
        return Err(built_in_named());
    }
    if name.as_deref().is_some_and(|n| name_taken(state, user.id, n)) {
        return Err(already_exists());
    }
    let mut view = state.user_data().navigation_view(user.id, fragment).cloned().ok_or_else(no_such_view)?;
    let mut data = Map::new();
    if let Some(name) = name {
        data.insert("name".into(), Value::from(name.as_str()));
        view.name = Some(name);
    }
    if let Some(is_pinned) = is_pinned {
        data.insert("is_pinned".into(), Value::Bool(is_pinned));
        view.is_pinned = is_pinned;
    }
    Ok(ViewChange::Update { user_id: user.id, view, data })
}

/// Plans `DELETE /navigation_views/{fragment}`: one of the user's views.
pub fn plan_remove(state: &RealmState, user_id: UserId, fragment: &str) -> ApiResult<ViewChange> {
    let user = state.user_or_err(user_id)?;
    let view = state.user_data().navigation_view(user.id, fragment).ok_or_else(no_such_view)?;
    Ok(ViewChange::Remove { user_id: user.id, fragment: view.fragment.clone() })
}

impl Change for ViewChange {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        match self {
            ViewChange::Add { realm_id, user_id, view } => {
                store::views::add_navigation_view(tx, *realm_id, *user_id, view)?
            }
            ViewChange::Update { user_id, view, .. } => store::views::update_navigation_view(tx, *user_id, view)?,
            ViewChange::Remove { user_id, fragment } => store::views::remove_navigation_view(tx, *user_id, fragment)?,
        }
        Ok(())
    }

    /// The `navigation_view` event, to the user.
    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let (user_id, fields) = match self {
            ViewChange::Add { user_id, view, .. } => {
                let fields = json!({"op": "add", "navigation_view": navigation_view_dict(&view)});
                state.user_data_mut().put_navigation_view(user_id, view);
                (user_id, fields)
            }
            ViewChange::Update { user_id, view, data } => {
                let fields = json!({"op": "update", "fragment": view.fragment, "data": data});
                state.user_data_mut().put_navigation_view(user_id, view);
                (user_id, fields)
            }
            ViewChange::Remove { user_id, fragment } => {
                state.user_data_mut().remove_navigation_view(user_id, &fragment);
                (user_id, json!({"op": "remove", "fragment": fragment}))
            }
        };
        Applied::events(vec![Outgoing::to(vec![user_id], Event::new("navigation_view", fields))])
    }
}
