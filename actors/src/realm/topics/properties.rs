//! Personal subscription properties (`POST /users/me/subscriptions/properties`, `PATCH
//! /users/me/subscriptions/{stream_id}`; Zulip's `update_subscription_properties_backend`
//! and `do_change_subscription_property`).

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::accessible_channel;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{ChannelId, UserId};
use crate::realm::model::Subscription;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;

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

/// A property value checked against its property (Zulip's `check_color` / boolean check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropertyValue {
    Color(String),
    Flag(bool),
}

impl PropertyValue {
    fn to_json(&self) -> Value {
        match self {
            PropertyValue::Color(c) => Value::from(c.as_str()),
            PropertyValue::Flag(b) => Value::Bool(*b),
        }
    }
}

/// One element of `subscription_data`: a property of one subscription and its new value,
/// already checked against the property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyChange {
    pub stream_id: i64,
    pub property: String,
    pub value: PropertyValue,
}

impl PropertyChange {
    /// Checks `value` against `property` (Zulip's `SubscriptionPropertyChangeRequest`
    /// validator, run while the request is parsed, before any channel is looked at).
    pub fn new(stream_id: i64, property: String, value: &Value) -> ApiResult<PropertyChange> {
        let value = if property == "color" {
            let Value::String(s) = value else {
                return Err(ApiError::bad_request("color is not a string"));
            };
            if !is_hex_color(s) {
                return Err(ApiError::bad_request("color is not a valid hex color code"));
            }
            PropertyValue::Color(s.clone())
        } else if PROPERTIES.contains(&property.as_str()) {
            let flag = value.as_bool().ok_or_else(|| ApiError::bad_request(format!("{property} is not a boolean")))?;
            PropertyValue::Flag(flag)
        } else {
            return Err(ApiError::bad_request(format!("Unknown subscription property: {property}")));
        };
        Ok(PropertyChange { stream_id, property, value })
    }

    /// Decodes and checks element `index` of `subscription_data` with Zulip's messages
    /// (its pydantic model: `stream_id` an integer, `property` a string, `value` present).
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
        PropertyChange::new(stream_id, property, field("value")?)
    }
}

/// Whether `s` is a hex color as Zulip's `check_color` accepts it (`#` and 3 to 6 hex digits).
pub fn is_hex_color(s: &str) -> bool {
    s.strip_prefix('#').is_some_and(|hex| (3..=6).contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Applies one checked change to a subscription; returns the property as stored
/// (`in_home_view` is stored as its inverse, `is_muted`) with its stored value.
fn apply(sub: &mut Subscription, property: &str, value: PropertyValue) -> (&'static str, PropertyValue) {
    let flag = match value {
        PropertyValue::Color(c) => {
            sub.color = c.clone();
            return ("color", PropertyValue::Color(c));
        }
        PropertyValue::Flag(b) => b,
    };
    let (stored, flag) = match property {
        "in_home_view" | "is_muted" => {
            let muted = if property == "in_home_view" { !flag } else { flag };
            sub.is_muted = muted;
            ("is_muted", muted)
        }
        "pin_to_top" => {
            sub.pin_to_top = flag;
            ("pin_to_top", flag)
        }
        name => {
            let (slot, stored) = match name {
                "desktop_notifications" => (&mut sub.desktop_notifications, "desktop_notifications"),
                "audible_notifications" => (&mut sub.audible_notifications, "audible_notifications"),
                "push_notifications" => (&mut sub.push_notifications, "push_notifications"),
                "email_notifications" => (&mut sub.email_notifications, "email_notifications"),
                _ => (&mut sub.wildcard_mentions_notify, "wildcard_mentions_notify"),
            };
            *slot = Some(flag);
            (stored, flag)
        }
    };
    (stored, PropertyValue::Flag(flag))
}

/// The `subscription`/`update` events of one change: `is_muted` is preceded by the legacy
/// `in_home_view` with the inverse value.
fn update_events(user: UserId, channel: ChannelId, property: &str, value: &PropertyValue) -> Vec<Outgoing> {
    let event = |property: &str, value: Value| {
        Outgoing::to(
            vec![user],
            Event::new(
                "subscription",
                json!({"op": "update", "property": property, "value": value, "stream_id": channel}),
            ),
        )
    };
    match (property, value) {
        ("is_muted", PropertyValue::Flag(muted)) => {
            vec![event("in_home_view", Value::Bool(!muted)), event("is_muted", value.to_json())]
        }
        _ => vec![event(property, value.to_json())],
    }
}

/// One change of a subscription's property, planned: the subscription as it becomes, and
/// the property as stored with its stored value.
#[derive(Debug, Clone)]
pub struct PropertyUpdate {
    sub: Subscription,
    property: &'static str,
    value: PropertyValue,
}

/// Plans one change: the channel must be accessible and `acting` subscribed to it.
pub fn plan_property(state: &RealmState, acting: UserId, change: &PropertyChange) -> ApiResult<PropertyUpdate> {
    let user = state.user_or_err(acting)?;
    let channel = accessible_channel(state, user, ChannelId(change.stream_id))?.id;
    let mut sub = state
        .subscription(acting, channel)
        .filter(|s| s.active)
        .cloned()
        .ok_or_else(|| ApiError::bad_request(format!("Not subscribed to channel ID {}", change.stream_id)))?;
    let (property, value) = apply(&mut sub, &change.property, change.value.clone());
    Ok(PropertyUpdate { sub, property, value })
}

impl Change for PropertyUpdate {
    type Output = ();

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        Ok(store::channels::put_subscription(tx, &self.sub)?)
    }

    fn apply(self, state: &mut RealmState) -> Applied<()> {
        let (user, channel) = (self.sub.user_id, self.sub.channel_id);
        state.put_subscription(self.sub);
        Applied::events(update_events(user, channel, self.property, &self.value))
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
        let check = |property: &str, value: Value| PropertyChange::new(1, property.into(), &value).map(|c| c.value);
        assert_eq!(check("color", json!("#fff")).unwrap(), PropertyValue::Color("#fff".into()));
        assert_eq!(check("color", json!(true)).unwrap_err().msg, "color is not a string");
        assert_eq!(check("color", json!("red")).unwrap_err().msg, "color is not a valid hex color code");
        assert_eq!(check("pin_to_top", json!("yes")).unwrap_err().msg, "pin_to_top is not a boolean");
        assert_eq!(check("is_muted", json!(false)).unwrap(), PropertyValue::Flag(false));
        assert_eq!(check("bogus", json!(false)).unwrap_err().msg, "Unknown subscription property: bogus");
    }

    #[test]
    fn elements_are_decoded_with_their_location() {
        let change =
            PropertyChange::from_json(0, &json!({"stream_id": 3, "property": "color", "value": "#fff"})).unwrap();
        assert_eq!(
            change,
            PropertyChange { stream_id: 3, property: "color".into(), value: PropertyValue::Color("#fff".into()) }
        );
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
        let mut sub = Subscription::new(UserId(1), ChannelId(2), "#000000".into());
        assert_eq!(
            apply(&mut sub, "in_home_view", PropertyValue::Flag(false)),
            ("is_muted", PropertyValue::Flag(true))
        );
        assert!(sub.is_muted);
        apply(&mut sub, "push_notifications", PropertyValue::Flag(false));
        assert_eq!(sub.push_notifications, Some(false));
    }
}
