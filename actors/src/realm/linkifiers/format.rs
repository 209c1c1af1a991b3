//! Linkifiers as the API shows them (Zulip's `linkifiers_for_realm`).

use serde_json::{json, Map, Value};

use crate::events::Event;
use crate::markdown::linkifier::{Linkifier, Linkifiers};

/// `{pattern, url_template, id, example_input, reverse_template, alternative_url_templates}`
/// (the last three since FL 471 and 478).
pub fn linkifier_dict(linkifier: &Linkifier) -> Value {
    json!({
        "pattern": linkifier.pattern,
        "url_template": linkifier.url_template,
        "id": linkifier.id,
        "example_input": linkifier.example_input,
        "reverse_template": linkifier.reverse_template,
        "alternative_url_templates": linkifier.alternative_url_templates,
    })
}

/// The linkifiers in their order: `GET /realm/linkifiers` and the `realm_linkifiers` data
/// set and event.
pub fn linkifiers_list(linkifiers: &Linkifiers) -> Value {
    linkifiers.list().map(linkifier_dict).collect()
}

/// The `realm_linkifiers` event (Zulip sends it only to queues with the
/// `linkifier_url_template` capability; the legacy `realm_filters` event is no longer sent).
pub fn linkifiers_event(linkifiers: &Linkifiers) -> Event {
    Event::new("realm_linkifiers", json!({ "realm_linkifiers": linkifiers_list(linkifiers) }))
}

/// The `realm_linkifiers` data set: the list for clients with the `linkifier_url_template`
/// capability, else empty (they would misread URL templates); and the legacy
/// `realm_filters`, always empty, as Zulip has sent it since URL templates replaced format
/// strings.
pub fn register_data(
    linkifiers: &Linkifiers,
    url_template_capable: bool,
    want: impl Fn(&str) -> bool,
    out: &mut Map<String, Value>,
) {
    if want("realm_linkifiers") {
        let list = if url_template_capable { linkifiers_list(linkifiers) } else { json!([]) };
        out.insert("realm_linkifiers".into(), list);
    }
    if want("realm_filters") {
        out.insert("realm_filters".into(), json!([]));
    }
}
