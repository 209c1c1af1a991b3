//! Personal subscription properties (`POST /users/me/subscriptions/properties`, `PATCH
//! /users/me/subscriptions/{stream_id}`; Zulip's `update_subscription_properties_backend`
//! and `do_change_subscription_property`).

use actix::prelude::*;
use serde_json::{json, Value};

use super::accessible_channel;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::model::Subscription;
use crate::realm::state::RealmState;
use crate::store::{self, Store};

/// The properties a user may change on their own subscription.
pub const PROPERTIES: [&str; 9] = [
    "color",
    "in_home_view",
    "is_muted",
    "desktop_notifications",
    "audible_notifications",
    "push_notifications",
    "email_notifications",
    "pin_to_top",
    "wildcard_mentions_notify",
];

/// One element of `subscription_data`: a property of one subscription and its new value
/// (a boolean or a string, not yet checked against the property).
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyChange {
    pub stream_id: i64,
    pub property: String,
    pub value: Value,
}

impl PropertyChange {
    /// Decodes element `index` of `subscription_data` with Zulip's messages (its pydantic
    /// model: `stream_id` an integer, `property` a string, `value` present).
    pub fn from_json(index: usize, item: &Value) -> ApiResult<PropertyChange> {
        let at = |key: &str| format!("subscription_data[{index}][\"{key}\"]");
        let Value::Object(map) = item else {
            return Err(ApiError::bad_request(format!("subscription_data[{index}] is not a dict")));
        };
        let field = |key: &str| {
            map.get(key).ok_or_else(|| ApiError::bad_request(format!("{} field is missing: Field required", at(key))))
        };
        let stream_id = field("stream_id")?
            .as_i64()
            .ok_or_else(|| ApiError::bad_request(format!("{} is not an integer", at("stream_id"))))?;
        let property = match field("property")? {
            Value::String(s) => s.clone(),
            _ => return Err(ApiError::bad_request(format!("{} is not a string", at("property")))),
        };
        let value = field("value")?.clone();
        Ok(PropertyChange { stream_id, property, value })
    }
}

/// A property value checked against its property: Zulip's `check_color` / `check_bool`.
#[derive(Debug, Clone, PartialEq)]
enum Checked {
    Color(String),
    Flag(bool),
}

impl Checked {
    fn to_json(&self) -> Value {
        match self {
            Checked::Color(c) => Value::from(c.as_str()),
            Checked::Flag(b) => Value::Bool(*b),
        }
    }
}

/// Whether `s` is a hex color as Zulip's `check_color` accepts it (`#` and 3 to 6 hex digits).
fn is_hex_color(s: &str) -> bool {
    s.strip_prefix('#').is_some_and(|hex| (3..=6).contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn check_value(property: &str, value: &Value) -> ApiResult<Checked> {
    if property == "color" {
        let Value::String(s) = value else {
            return Err(ApiError::bad_request("color is not a string"));
        };
        if !is_hex_color(s) {
            return Err(ApiError::bad_request("color is not a valid hex color code"));
        }
        return Ok(Checked::Color(s.clone()));
    }
    value.as_bool().map(Checked::Flag).ok_or_else(|| ApiError::bad_request(format!("{property} is not a boolean")))
}

/// A validated change: the subscription as it will be and the property as stored
/// (`in_home_view` is stored as its inverse, `is_muted`).
struct Validated {
    sub: Subscription,
    property: &'static str,
    value: Checked,
}

/// Applies one checked property to a subscription; returns the stored property name and
/// value.
fn apply(sub: &mut Subscription, property: &str, value: Checked) -> (&'static str, Checked) {
    match (property, value) {
        ("color", Checked::Color(c)) => {
            sub.color = c.clone();
            ("color", Checked::Color(c))
        }
        ("in_home_view", Checked::Flag(b)) => {
            sub.is_muted = !b;
            ("is_muted", Checked::Flag(!b))
        }
        ("is_muted", Checked::Flag(b)) => {
            sub.is_muted = b;
            ("is_muted", Checked::Flag(b))
        }
        ("pin_to_top", Checked::Flag(b)) => {
            sub.pin_to_top = b;
            ("pin_to_top", Checked::Flag(b))
        }
        (name, Checked::Flag(b)) => {
            let (slot, stored) = match name {
                "desktop_notifications" => (&mut sub.desktop_notifications, "desktop_notifications"),
                "audible_notifications" => (&mut sub.audible_notifications, "audible_notifications"),
                "push_notifications" => (&mut sub.push_notifications, "push_notifications"),
                "email_notifications" => (&mut sub.email_notifications, "email_notifications"),
                _ => (&mut sub.wildcard_mentions_notify, "wildcard_mentions_notify"),
            };
            *slot = Some(b);
            (stored, Checked::Flag(b))
        }
        // `check_value` gives colors only to `color`.
        (_, value) => ("color", value),
    }
}

/// Checks every change in order with Zulip's messages (unknown property, channel access,
/// subscription, value); later changes of the same subscription build on earlier ones.
fn validate(state: &RealmState, acting: UserId, changes: &[PropertyChange]) -> ApiResult<Vec<Validated>> {
    let user = state.user_or_err(acting)?;
    let mut out: Vec<Validated> = Vec::with_capacity(changes.len());
    for change in changes {
        if !PROPERTIES.contains(&change.property.as_str()) {
            return Err(ApiError::bad_request(format!("Unknown subscription property: {}", change.property)));
        }
        let channel = accessible_channel(state, user, ChannelId(change.stream_id))?;
        let not_subscribed = || ApiError::bad_request(format!("Not subscribed to channel ID {}", change.stream_id));
        let current = out.iter().rev().find(|v| v.sub.channel_id == channel.id).map(|v| &v.sub);
        let mut sub = match current {
            Some(sub) => sub.clone(),
            None => state.subscription(acting, channel.id).filter(|s| s.active).cloned().ok_or_else(not_subscribed)?,
        };
        let value = check_value(&change.property, &change.value)?;
        let (property, value) = apply(&mut sub, &change.property, value);
        out.push(Validated { sub, property, value });
    }
    Ok(out)
}

/// The `subscription`/`update` events of one change: `is_muted` is preceded by the legacy
/// `in_home_view` with the inverse value.
fn update_events(user: UserId, change: &Validated) -> Vec<Outgoing> {
    let event = |property: &str, value: Value| {
        Outgoing::to(
            vec![user],
            Event::new(
                "subscription",
                json!({"op": "update", "property": property, "value": value, "stream_id": change.sub.channel_id}),
            ),
        )
    };
    let value = change.value.to_json();
    match (change.property, &change.value) {
        ("is_muted", Checked::Flag(muted)) => {
            vec![event("in_home_view", Value::Bool(!muted)), event("is_muted", value)]
        }
        (property, _) => vec![event(property, value)],
    }
}

/// Changes properties of `acting`'s own subscriptions. Every change is validated before
/// any is applied, so a refused request changes nothing (Zulip applies them one by one and
/// may stop halfway).
pub fn update_properties(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    changes: &[PropertyChange],
) -> ApiResult<Vec<Outgoing>> {
    let validated = validate(state, acting, changes)?;
    store.write(|tx| validated.iter().try_for_each(|v| store::channels::put_subscription(tx, &v.sub)))?;
    let mut events = Vec::new();
    for change in &validated {
        events.extend(update_events(acting, change));
    }
    for change in validated {
        state.put_subscription(change.sub);
    }
    Ok(events)
}

/// `POST /users/me/subscriptions/properties` (and the single-property `PATCH`): changes
/// the requester's own subscription settings.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateSubscriptionProperties {
    pub user_id: UserId,
    pub changes: Vec<PropertyChange>,
}

impl Handler<UpdateSubscriptionProperties> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateSubscriptionProperties, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.user_id)?;
        let events = update_properties(&mut self.state, &self.store, msg.user_id, &msg.changes)?;
        self.committed(events);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_colors_as_zulip_checks_them() {
        for ok in ["#abc", "#a1b2c3", "#ABCD", "#12345"] {
            assert!(is_hex_color(ok), "{ok}");
        }
        for bad in ["abc", "#ab", "#1234567", "#ggg", "", "#"] {
            assert!(!is_hex_color(bad), "{bad}");
        }
    }

    #[test]
    fn values_are_checked_per_property() {
        assert_eq!(check_value("color", &json!("#fff")).unwrap(), Checked::Color("#fff".into()));
        assert_eq!(check_value("color", &json!(true)).unwrap_err().msg, "color is not a string");
        assert_eq!(check_value("color", &json!("red")).unwrap_err().msg, "color is not a valid hex color code");
        assert_eq!(check_value("pin_to_top", &json!("yes")).unwrap_err().msg, "pin_to_top is not a boolean");
        assert_eq!(check_value("is_muted", &json!(false)).unwrap(), Checked::Flag(false));
    }

    #[test]
    fn elements_are_decoded_with_their_location() {
        let change =
            PropertyChange::from_json(0, &json!({"stream_id": 3, "property": "color", "value": "#fff"})).unwrap();
        assert_eq!(change, PropertyChange { stream_id: 3, property: "color".into(), value: json!("#fff") });
        let msg = |v: Value| PropertyChange::from_json(1, &v).unwrap_err().msg;
        assert_eq!(
            msg(json!({"stream_id": 3, "property": "color"})),
            "subscription_data[1][\"value\"] field is missing: Field required"
        );
        assert_eq!(
            msg(json!({"stream_id": "3", "property": "x", "value": 1})),
            "subscription_data[1][\"stream_id\"] is not an integer"
        );
        assert_eq!(
            msg(json!({"stream_id": 3, "property": 4, "value": 1})),
            "subscription_data[1][\"property\"] is not a string"
        );
        assert_eq!(msg(json!([])), "subscription_data[1] is not a dict");
    }

    #[test]
    fn in_home_view_is_stored_inverted() {
        let mut sub = Subscription {
            user_id: UserId(1),
            channel_id: ChannelId(2),
            active: true,
            color: "#000000".into(),
            is_muted: false,
            pin_to_top: false,
            desktop_notifications: None,
            audible_notifications: None,
            push_notifications: None,
            email_notifications: None,
            wildcard_mentions_notify: None,
        };
        assert_eq!(apply(&mut sub, "in_home_view", Checked::Flag(false)), ("is_muted", Checked::Flag(true)));
        assert!(sub.is_muted);
        apply(&mut sub, "push_notifications", Checked::Flag(false));
        assert_eq!(sub.push_notifications, Some(false));
    }
}
