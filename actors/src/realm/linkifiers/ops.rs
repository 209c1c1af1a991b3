//! Adding, changing, removing and reordering linkifiers (Zulip's
//! `zerver/actions/realm_linkifiers.py`), planned from the state with the checks of
//! `RealmFilter.full_clean` in Django's order and with its messages, written, applied.
//!
//! Only administrators may (Zulip's `require_realm_admin`). Each change compiles the list
//! once and sends the `realm_linkifiers` event to every active user.

use rusqlite::Transaction;

use super::format::linkifiers_event;
use crate::error::{ApiError, ApiResult};
use crate::events::Outgoing;
use crate::ids::{RealmId, UserId};
use crate::markdown::linkifier::{check_pattern, fill_reverse_template, whole_match_groups, Linkifier, Linkifiers};
use crate::markdown::uri_template::UriTemplate;
use crate::realm::permissions::require_admin;
use crate::realm::state::RealmState;
use crate::realm::{Applied, Change};
use crate::store;
use crate::validate::python_strip;

/// A planned change of the organization's linkifiers.
#[derive(Debug, Clone)]
pub enum LinkifierChange {
    /// The id is set by the write.
    Add {
        realm_id: RealmId,
        linkifier: Linkifier,
    },
    Update {
        realm_id: RealmId,
        linkifier: Linkifier,
    },
    Remove {
        realm_id: RealmId,
        id: i64,
    },
    Reorder {
        realm_id: RealmId,
        ids: Vec<i64>,
    },
}

/// "Linkifier not found." (400).
fn not_found() -> ApiError {
    ApiError::bad_request("Linkifier not found.")
}

fn admin(state: &RealmState, acting: UserId) -> ApiResult<()> {
    require_admin(state.user_or_err(acting)?.role)
}

/// Zulip's `RealmFilter.full_clean` of `pattern` and `url_template` (already stripped) for
/// the linkifier `id` (0: a new one): field errors, then `clean()`'s, then the uniqueness of
/// the pattern. Refused with the first message and every message by field in `errors`.
pub fn check(state: &RealmState, id: i64, pattern: &str, url_template: &str) -> ApiResult<()> {
    const BLANK: &str = "This field cannot be blank.";
    let mut errors: Vec<(&str, String)> = Vec::new();
    if pattern.is_empty() {
        errors.push(("pattern", BLANK.into()));
    }
    let template = UriTemplate::parse(url_template);
    if url_template.is_empty() {
        errors.push(("url_template", BLANK.into()));
    } else if template.is_none() {
        errors.push(("url_template", "Invalid URL template.".into()));
    }
    match check_pattern(pattern) {
        Err(message) => errors.push(("__all__", message)),
        Ok(groups) => {
            if let Some(template) = &template {
                let vars = template.variable_names();
                let missing_in_pattern = vars.iter().filter(|v| !groups.iter().any(|g| g == *v)).min();
                let missing_in_url = groups.iter().filter(|g| !vars.contains(&g.as_str())).min();
                if let Some(name) = missing_in_pattern {
                    let message =
                        format!("Group {} in URL template is not present in linkifier pattern.", py_repr(name));
                    errors.push(("__all__", message));
                } else if let Some(name) = missing_in_url {
                    let message =
                        format!("Group {} in linkifier pattern is not present in URL template.", py_repr(name));
                    errors.push(("__all__", message));
                }
            }
        }
    }
    let field_error = errors.iter().any(|(field, _)| *field == "pattern");
    if !field_error && state.linkifiers().list().any(|l| l.id != id && l.pattern == pattern) {
        errors.push(("__all__", "Realm filter with this Realm and Pattern already exists.".into()));
    }
    match ApiError::validation_failure(&errors) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Python's `repr` of a group name (letters, digits and `_`): in single quotes.
fn py_repr(name: &str) -> String {
    format!("'{}'", name.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The reverse-linkification fields of `POST /realm/filters` and `PATCH
/// /realm/filters/{filter_id}` (FL 471, 478): `None` when not given (a change keeps the
/// linkifier's); an empty `example_input` or `reverse_template` is none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    pub example_input: Option<String>,
    pub reverse_template: Option<String>,
    pub alternative_url_templates: Option<Vec<String>>,
}

/// A linkifier with `extras` applied over `base`'s fields.
fn with_extras(base: Option<&Linkifier>, id: i64, pattern: &str, url_template: &str, extras: Extras) -> Linkifier {
    let keep = |given: Option<String>, old: Option<&Option<String>>| match given {
        Some(text) => Some(text).filter(|t| !t.is_empty()),
        None => old.cloned().flatten(),
    };
    Linkifier {
        id,
        pattern: pattern.into(),
        url_template: url_template.into(),
        example_input: keep(extras.example_input, base.map(|b| &b.example_input)),
        reverse_template: keep(extras.reverse_template, base.map(|b| &b.reverse_template)),
        alternative_url_templates: extras
            .alternative_url_templates
            .or_else(|| base.map(|b| b.alternative_url_templates.clone()))
            .unwrap_or_default(),
    }
}

/// The checks of the reverse-linkification fields (FL 471, 478), after `check`: each
/// alternative URL template is one, with only the pattern's groups; a reverse template needs
/// an example input, which the pattern must match whole and the reverse template must give
/// back from the groups of that match. Zulip's documentation gives none of these messages:
/// they are Agora's, in Zulip's manner.
pub fn check_extras(linkifier: &Linkifier) -> ApiResult<()> {
    let groups = check_pattern(&linkifier.pattern).unwrap_or_default();
    for alternative in &linkifier.alternative_url_templates {
        let template = UriTemplate::parse(alternative)
            .ok_or_else(|| ApiError::bad_request(format!("Invalid URL template: {alternative}")))?;
        if let Some(name) = template.variable_names().into_iter().find(|v| !groups.iter().any(|g| g.as_str() == *v)) {
            let message = format!("Group {} in URL template is not present in linkifier pattern.", py_repr(name));
            return Err(ApiError::bad_request(message));
        }
    }
    let Some(reverse) = &linkifier.reverse_template else { return Ok(()) };
    let Some(example) = &linkifier.example_input else {
        return Err(ApiError::bad_request("An example input is required for a reverse template."));
    };
    let Some(groups) = whole_match_groups(&linkifier.pattern, example) else {
        return Err(ApiError::bad_request("Example input does not match the linkifier pattern."));
    };
    if fill_reverse_template(reverse, &groups).as_deref() != Some(example.as_str()) {
        return Err(ApiError::bad_request("Reverse template does not reproduce the example input."));
    }
    Ok(())
}

/// Plans `POST /realm/filters`.
pub fn plan_add(
    state: &RealmState,
    acting: UserId,
    pattern: &str,
    url_template: &str,
    extras: Extras,
) -> ApiResult<LinkifierChange> {
    admin(state, acting)?;
    let (pattern, url_template) = (python_strip(pattern), python_strip(url_template));
    check(state, 0, pattern, url_template)?;
    let linkifier = with_extras(None, 0, pattern, url_template, extras);
    check_extras(&linkifier)?;
    Ok(LinkifierChange::Add { realm_id: state.realm().id, linkifier })
}

/// Plans `PATCH /realm/filters/{filter_id}`: the linkifier is looked up before anything
/// is checked.
pub fn plan_update(
    state: &RealmState,
    acting: UserId,
    id: i64,
    pattern: &str,
    url_template: &str,
    extras: Extras,
) -> ApiResult<LinkifierChange> {
    admin(state, acting)?;
    let Some(old) = state.linkifiers().list().find(|l| l.id == id) else {
        return Err(not_found());
    };
    let (pattern, url_template) = (python_strip(pattern), python_strip(url_template));
    check(state, id, pattern, url_template)?;
    let linkifier = with_extras(Some(old), id, pattern, url_template, extras);
    check_extras(&linkifier)?;
    Ok(LinkifierChange::Update { realm_id: state.realm().id, linkifier })
}

/// Plans `DELETE /realm/filters/{filter_id}`.
pub fn plan_remove(state: &RealmState, acting: UserId, id: i64) -> ApiResult<LinkifierChange> {
    admin(state, acting)?;
    if !state.linkifiers().list().any(|l| l.id == id) {
        return Err(not_found());
    }
    Ok(LinkifierChange::Remove { realm_id: state.realm().id, id })
}

/// Plans `PATCH /realm/linkifiers`: `ids` lists every linkifier once. `None` when there is
/// nothing to order (no linkifiers and an empty list): Zulip then sends no event.
pub fn plan_reorder(state: &RealmState, acting: UserId, ids: Vec<i64>) -> ApiResult<Option<LinkifierChange>> {
    admin(state, acting)?;
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    if unique.len() < ids.len() {
        return Err(ApiError::bad_request("The ordered list must not contain duplicated linkifiers"));
    }
    let mut existing: Vec<i64> = state.linkifiers().list().map(|l| l.id).collect();
    existing.sort_unstable();
    if existing != unique {
        return Err(ApiError::bad_request("The ordered list must enumerate all existing linkifiers exactly once"));
    }
    if existing.is_empty() {
        return Ok(None);
    }
    Ok(Some(LinkifierChange::Reorder { realm_id: state.realm().id, ids }))
}

impl Change for LinkifierChange {
    /// The linkifier's id (0 for a reordering).
    type Output = i64;

    fn write(&mut self, tx: &Transaction<'_>) -> ApiResult<()> {
        match self {
            LinkifierChange::Add { realm_id, linkifier } => {
                linkifier.id = store::linkifiers::add(tx, *realm_id, linkifier)?;
            }
            LinkifierChange::Update { realm_id, linkifier } => store::linkifiers::update(tx, *realm_id, linkifier)?,
            LinkifierChange::Remove { realm_id, id } => store::linkifiers::remove(tx, *realm_id, *id)?,
            LinkifierChange::Reorder { realm_id, ids } => store::linkifiers::reorder(tx, *realm_id, ids)?,
        }
        Ok(())
    }

    /// The new list, compiled once; `realm_linkifiers` to every active user.
    fn apply(self, state: &mut RealmState) -> Applied<i64> {
        let mut list = state.linkifiers().to_vec();
        let id = match self {
            LinkifierChange::Add { linkifier, .. } => {
                let id = linkifier.id;
                list.push(linkifier);
                id
            }
            LinkifierChange::Update { linkifier, .. } => {
                let id = linkifier.id;
                if let Some(slot) = list.iter_mut().find(|l| l.id == id) {
                    *slot = linkifier;
                }
                id
            }
            LinkifierChange::Remove { id, .. } => {
                list.retain(|l| l.id != id);
                id
            }
            LinkifierChange::Reorder { ids, .. } => {
                list.sort_by_key(|l| ids.iter().position(|id| *id == l.id));
                0
            }
        };
        state.set_linkifiers(Linkifiers::new(list));
        let event: Outgoing = state.to_everyone(linkifiers_event(state.linkifiers()));
        Applied::new(id, vec![event])
    }
}
