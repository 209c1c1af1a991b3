//! Adding and removing code playgrounds (Zulip's `add_realm_playground`,
//! `delete_realm_playground` and `zerver/actions/realm_playgrounds.py`), planned from the
//! state with the checks of the view and of `RealmPlayground.full_clean`, in Django's order
//! and with its messages, written, applied.
//!
//! Only administrators may (Zulip's `require_realm_admin`). Each change sends the whole list
//! in a `realm_playgrounds` event to every active user.

use rusqlite::Transaction;
use serde_json::{json, Value};

use super::format::playgrounds_event;
use super::AddPlayground;
use crate::error::{ApiError, ApiResult};
use crate::events::{Event, Outgoing};
use crate::ids::{RealmId, UserId};
use crate::markdown::uri_template::UriTemplate;
use crate::realm::model::{Playground, Realm};
use crate::realm::permissions::require_admin;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;
use crate::validate::python_strip;

/// Zulip's `RealmPlayground.MAX_PYGMENTS_LANGUAGE_LENGTH`.
pub const MAX_PYGMENTS_LANGUAGE_LENGTH: usize = 40;

/// The organization setting a removed playground's language is cleared from.
const DEFAULT_LANGUAGE: &str = "default_code_block_language";

/// A planned change of the organization's playgrounds.
#[derive(Debug, Clone)]
pub enum PlaygroundChange {
    /// The id is set by the write.
    Add { realm_id: RealmId, playground: Playground },
    /// With the organization as it becomes when its default code block language was the
    /// playground's (cleared, as Zulip does).
    Remove { realm_id: RealmId, id: i64, realm: Option<Realm> },
}

fn admin(state: &RealmState, acting: UserId) -> ApiResult<()> {
    require_admin(state.user_or_err(acting)?.role)
}

/// Zulip's `check_pygments_language`: at most 40 characters, of `^[ a-zA-Z0-9_+-./#]*$`
/// (the class's `+-.` is the range `+,-.`; Python's `$` also matches before a final newline).
fn check_pygments_language(raw: &str) -> ApiResult<()> {
    ApiError::check_length("pygments_language", raw, MAX_PYGMENTS_LANGUAGE_LENGTH)?;
    let body = raw.strip_suffix('\n').unwrap_or(raw);
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '+' | ',' | '-' | '.' | '/' | '#');
    if !body.chars().all(allowed) {
        return Err(ApiError::bad_request("Invalid characters in pygments language"));
    }
    Ok(())
}

/// Zulip's `RealmPlayground.full_clean` of a new playground (fields already stripped): the
/// fields' errors in the model's order (`url_template`, `name`, `pygments_language`), then
/// `clean()`'s (the template's variables), then the uniqueness of (language, name) unless
/// one of those two failed. Refused with the first message and every message by field.
pub fn check(state: &RealmState, playground: &Playground) -> ApiResult<()> {
    const BLANK: &str = "This field cannot be blank.";
    let mut errors: Vec<(&str, String)> = Vec::new();
    let template = UriTemplate::parse(&playground.url_template);
    if playground.url_template.is_empty() {
        errors.push(("url_template", BLANK.into()));
    } else if template.is_none() {
        errors.push(("url_template", "Invalid URL template.".into()));
    }
    if playground.name.is_empty() {
        errors.push(("name", BLANK.into()));
    }
    if playground.pygments_language.is_empty() {
        errors.push(("pygments_language", BLANK.into()));
    }
    if let Some(template) = &template {
        let names = template.variable_names();
        if !names.contains(&"code") {
            errors.push(("__all__", r#"Missing the required variable "code" in the URL template"#.into()));
        } else if names.len() != 1 {
            errors.push(("__all__", r#""code" should be the only variable present in the URL template"#.into()));
        }
    }
    let unique_checked = !errors.iter().any(|(field, _)| matches!(*field, "name" | "pygments_language"));
    let taken = state
        .playgrounds()
        .iter()
        .any(|p| p.pygments_language == playground.pygments_language && p.name == playground.name);
    if unique_checked && taken {
        errors.push(("__all__", "Realm playground with this Realm, Pygments language and Name already exists.".into()));
    }
    match ApiError::validation_failure(&errors) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Plans `POST /realm/playgrounds`: the role, `pygments_language`, a missing `url_template`,
/// then the three stripped values as the model checks them.
pub fn plan_add(state: &RealmState, msg: AddPlayground) -> ApiResult<PlaygroundChange> {
    admin(state, msg.acting)?;
    check_pygments_language(&msg.pygments_language)?;
    let url_template = msg.url_template.ok_or_else(|| ApiError::missing_argument("url_template"))?;
    let playground = Playground {
        id: 0,
        name: python_strip(&msg.name).to_owned(),
        pygments_language: python_strip(&msg.pygments_language).to_owned(),
        url_template: python_strip(&url_template).to_owned(),
    };
    check(state, &playground)?;
    Ok(PlaygroundChange::Add { realm_id: state.realm().id, playground })
}

/// Plans `DELETE /realm/playgrounds/{playground_id}`: "Invalid playground" unless the
/// organization has it; the default code block language is cleared if it was its language.
pub fn plan_remove(state: &RealmState, acting: UserId, id: i64) -> ApiResult<PlaygroundChange> {
    admin(state, acting)?;
    let playground =
        state.playgrounds().iter().find(|p| p.id == id).ok_or_else(|| ApiError::bad_request("Invalid playground"))?;
    let default = state.realm().settings.get(DEFAULT_LANGUAGE).and_then(Value::as_str).unwrap_or("");
    let realm = (default == playground.pygments_language).then(|| {
        let mut realm = state.realm().clone();
        realm.settings.insert(DEFAULT_LANGUAGE.into(), json!(""));
        realm
    });
    Ok(PlaygroundChange::Remove { realm_id: state.realm().id, id, realm })
}

impl Change for PlaygroundChange {
    /// The playground's id.
    type Output = i64;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        match self {
            PlaygroundChange::Add { realm_id, playground } => {
                playground.id = store::playgrounds::add(tx, *realm_id, playground)?;
            }
            PlaygroundChange::Remove { realm_id, id, realm } => {
                if let Some(realm) = realm {
                    store::realms::save_settings(tx, realm)?;
                }
                store::playgrounds::remove(tx, *realm_id, *id)?;
            }
        }
        Ok(())
    }

    /// The new list; the cleared setting's `realm` event first, then `realm_playgrounds`,
    /// both to every active user.
    fn apply(self, state: &mut RealmState) -> Applied<i64> {
        let mut list = state.playgrounds().to_vec();
        let mut events = Vec::new();
        let id = match self {
            PlaygroundChange::Add { playground, .. } => {
                let id = playground.id;
                list.push(playground);
                id
            }
            PlaygroundChange::Remove { id, realm, .. } => {
                if let Some(realm) = realm {
                    state.set_realm(realm);
                    let body = json!({"op": "update", "property": DEFAULT_LANGUAGE, "value": ""});
                    events.push(state.to_everyone(Event::new("realm", body)));
                }
                list.retain(|p| p.id != id);
                id
            }
        };
        state.set_playgrounds(list);
        let event: Outgoing = state.to_everyone(playgrounds_event(state.playgrounds()));
        events.push(event);
        Applied::new(id, events)
    }
}
