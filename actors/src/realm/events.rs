//! Event builders several features send (a leaf: it imports no feature).

use serde_json::{json, Value};

use crate::events::Event;

/// `realm_user` `update` with the changed fields of one user (`person` holds `user_id`).
pub fn realm_user_update(person: Value) -> Event {
    Event::new("realm_user", json!({"op": "update", "person": person}))
}
