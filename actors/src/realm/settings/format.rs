//! The events of personal setting changes, as Zulip sends them.

use serde_json::{json, Value};

use crate::events::{Event, Outgoing};
use crate::realm::catalog::{self, Setting};
use crate::realm::events::realm_user_update;
use crate::realm::format::{avatar_url, avatar_url_medium, can_access_delivery_email};
use crate::realm::model::{EmailVisibility, User};
use crate::realm::state::RealmState;

/// The events of one changed personal setting: `user_settings` to the user, and for
/// `timezone` the `realm_user` update everyone sees. (The legacy `update_display_settings`
/// and `update_global_notifications` events are no longer sent since FL 439; clients
/// without `user_settings_object` still get the legacy register keys.)
pub fn setting_events(state: &RealmState, user: &User, setting: &Setting, value: &Value) -> Vec<Outgoing> {
    let language_name =
        (setting.name == "default_language").then(|| value.as_str().and_then(catalog::language_name)).flatten();
    let mut modern = json!({"op": "update", "property": setting.name, "value": value});
    if let Some(name) = language_name {
        modern["language_name"] = Value::from(name);
    }
    let mut events = vec![Outgoing::to(vec![user.id], Event::new("user_settings", modern))];
    if setting.name == "timezone" {
        let person = json!({"email": user.email, "user_id": user.id, "timezone": user.timezone});
        events.push(state.to_everyone(realm_user_update(person)));
    }
    events
}

/// Zulip's `notify_avatar_url_change`: the avatar fields, to everyone.
fn avatar_event(state: &RealmState, user: &User) -> Outgoing {
    let person = json!({
        "avatar_source": user.avatar_source,
        "avatar_url": avatar_url(user),
        "avatar_url_medium": avatar_url_medium(user),
        "avatar_version": user.avatar_version,
        "user_id": user.id,
    });
    state.to_everyone(realm_user_update(person))
}

/// Zulip's `send_user_email_update_event`: the new API email, to everyone.
fn api_email_event(state: &RealmState, user: &User) -> Outgoing {
    Outgoing::to(state.active_user_ids(), realm_user_update(json!({"user_id": user.id, "new_email": user.email})))
}

/// The events of a new delivery email (Zulip's `do_change_user_delivery_email`): the address
/// to everyone allowed to see it, the new gravatar, and the new API email when it is the
/// real one.
pub fn delivery_email_events(state: &RealmState, user: &User) -> Vec<Outgoing> {
    let viewers = state.users().filter(|v| v.is_active && can_access_delivery_email(v, user)).map(|v| v.id).collect();
    let person = json!({"user_id": user.id, "delivery_email": user.delivery_email});
    let mut events = vec![Outgoing::to(viewers, realm_user_update(person))];
    if user.avatar_source == "G" {
        events.push(avatar_event(state, user));
    }
    // A bot's address is always public (Zulip's `email_address_is_realm_public`).
    if user.email_address_visibility == EmailVisibility::Everyone || user.is_bot {
        events.push(api_email_event(state, user));
    }
    events
}

/// The events of a new `email_address_visibility` (Zulip's
/// `send_delivery_email_update_events` and what follows it): the real address to each user
/// who may now see it, `null` to those who no longer may, then, when the API email changed
/// (to or from "everyone"), the new API email and the avatar.
pub fn visibility_events(state: &RealmState, before: &User, after: &User) -> Vec<Outgoing> {
    let (mut gaining, mut losing) = (Vec::new(), Vec::new());
    for viewer in state.users().filter(|u| u.is_active) {
        match (can_access_delivery_email(viewer, before), can_access_delivery_email(viewer, after)) {
            (false, true) => gaining.push(viewer.id),
            (true, false) => losing.push(viewer.id),
            _ => {}
        }
    }
    let mut events = Vec::new();
    if !gaining.is_empty() {
        let person = json!({"user_id": after.id, "delivery_email": after.delivery_email});
        events.push(Outgoing::to(gaining, realm_user_update(person)));
    }
    if !losing.is_empty() {
        events.push(Outgoing::to(losing, realm_user_update(json!({"user_id": after.id, "delivery_email": null}))));
    }
    if before.email != after.email {
        events.push(api_email_event(state, after));
        events.push(avatar_event(state, after));
    }
    events
}
