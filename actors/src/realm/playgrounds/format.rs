//! Playgrounds as the API shows them (Zulip's `get_realm_playgrounds`).

use serde_json::{json, Map, Value};

use crate::events::Event;
use crate::realm::model::Playground;

/// `{id, name, pygments_language, url_template}`.
pub fn playground_dict(playground: &Playground) -> Value {
    json!({
        "id": playground.id,
        "name": playground.name,
        "pygments_language": playground.pygments_language,
        "url_template": playground.url_template,
    })
}

/// Every playground, by id: the `realm_playgrounds` data set and event.
pub fn playgrounds_list(playgrounds: &[Playground]) -> Value {
    playgrounds.iter().map(playground_dict).collect()
}

/// The `realm_playgrounds` event: the whole list as it now is.
pub fn playgrounds_event(playgrounds: &[Playground]) -> Event {
    Event::new("realm_playgrounds", json!({ "realm_playgrounds": playgrounds_list(playgrounds) }))
}

/// The `realm_playgrounds` data set of `POST /register`.
pub fn register_data(playgrounds: &[Playground], want: impl Fn(&str) -> bool, out: &mut Map<String, Value>) {
    if want("realm_playgrounds") {
        out.insert("realm_playgrounds".into(), playgrounds_list(playgrounds));
    }
}
