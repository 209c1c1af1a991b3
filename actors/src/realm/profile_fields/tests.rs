//! Custom profile fields: plans applied to a state built in memory (no database), and
//! changes committed to a real one.

use serde_json::{json, Map, Value};

use super::ops::*;
use super::*;
use crate::error::{ApiError, ApiResult};
use crate::events::Outgoing;
use crate::realm::commit;
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::tests::{add, memory, setup};
use crate::realm::Change;
use crate::store::Store;

// --- Plans applied in memory. ---

fn field(name: &str, field_type: i64) -> NewField {
    NewField {
        name: name.into(),
        hint: String::new(),
        field_type,
        field_data: Map::new(),
        display_in_profile_summary: false,
        required: false,
        editable_by_user: true,
        use_for_user_matching: false,
    }
}

/// Creates a field in memory, with the id the database would give it.
fn define(state: &mut RealmState, id: i64, new: NewField) {
    plan_create(state, UserId(1), new).unwrap().written_as(FieldId(id)).apply(state);
}

#[test]
fn a_new_field_comes_last_and_everyone_gets_the_list() {
    let mut state = memory::state();
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    define(&mut state, 3, field("Bio", field_type::SHORT_TEXT));
    let new = NewField { name: "  Desk ".into(), hint: "Where".into(), ..field("", field_type::SHORT_TEXT) };
    let change = plan_create(&state, UserId(1), new).unwrap();
    let applied = change.written_as(FieldId(7)).apply(&mut state);
    assert_eq!(applied.output, FieldId(7));
    assert_eq!(applied.events.len(), 1);
    assert_eq!(applied.events[0].users, vec![UserId(1), member]);
    let names: Vec<&Value> =
        applied.events[0].event.body()["fields"].as_array().unwrap().iter().map(|f| &f["name"]).collect();
    assert_eq!(names, [&json!("Bio"), &json!("Desk")]);
    assert_eq!(
        applied.events[0].event.body()["fields"][1],
        json!({"id": 7, "name": "Desk", "type": 1, "hint": "Where", "field_data": "", "order": 7,
               "required": false, "editable_by_user": true})
    );
    // Administrators only; labels are unique.
    assert_eq!(plan_create(&state, member, field("X", 1)).unwrap_err(), ApiError::must_be_admin());
    assert_eq!(
        plan_create(&state, UserId(1), field("Desk", 1)).unwrap_err().msg,
        "A field with that label already exists."
    );
}

#[test]
fn reordering_lists_every_field_in_its_new_place() {
    let mut state = memory::state();
    for (id, name) in [(1, "A"), (2, "B"), (3, "C")] {
        define(&mut state, id, field(name, field_type::SHORT_TEXT));
    }
    let err = plan_reorder(&state, UserId(1), &[3, 1]).unwrap_err();
    assert_eq!(err.msg, "Invalid order mapping.");
    // Unknown ids are ignored; a repeated id takes its last place.
    let applied = plan_reorder(&state, UserId(1), &[2, 3, 99, 1, 2]).unwrap().apply(&mut state);
    let order: Vec<(i64, i64)> = state.profile_fields().iter().map(|f| (f.id.0, f.order)).collect();
    assert_eq!(order, vec![(3, 1), (1, 3), (2, 4)]);
    let shown: Vec<i64> = applied.events[0].event.body()["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_i64().unwrap())
        .collect();
    assert_eq!(shown, vec![3, 1, 2]);
}

#[test]
fn own_values_are_planned_for_humans_and_only_what_changes_is_told() {
    let mut state = memory::state();
    let member = memory::user(&mut state, "m@acme.test", Role::Member);
    define(&mut state, 1, field("Bio", field_type::SHORT_TEXT));
    define(&mut state, 2, NewField { editable_by_user: false, ..field("Badge", field_type::SHORT_TEXT) });
    let user = state.user(member).unwrap().clone();
    let err = plan_own_values(&state, &user, &[json!({"id": 2, "value": "x"})]).unwrap_err();
    assert_eq!(err.msg, "You are not allowed to change this field. Contact an administrator to update it.");
    let data = [json!({"id": 1, "value": "old"}), json!({"id": 1, "value": "*new*"})];
    let applied = plan_own_values(&state, &user, &data).unwrap().apply(&mut state);
    assert_eq!(
        applied.events.iter().map(|o| Value::Object(o.event.body().clone())).collect::<Vec<_>>(),
        vec![json!({"type": "realm_user", "op": "update", "person": {"user_id": member,
            "custom_profile_field": {"id": 1, "value": "*new*", "rendered_value": "<p><em>new</em></p>"}}})]
    );
    assert_eq!(state.user(member).unwrap().profile_data[&FieldId(1)].value, "*new*");
    let user = state.user(member).unwrap().clone();
    assert!(plan_own_values(&state, &user, &data[1..]).unwrap().is_empty());
    let removal = plan_own_removal(&state, &user, &[1]).unwrap().apply(&mut state);
    assert_eq!(removal.events[0].event.body()["person"]["custom_profile_field"], json!({"id": 1, "value": null}));
    let mut bot = user.clone();
    bot.is_bot = true;
    assert_eq!(plan_own_removal(&state, &bot, &[1]).unwrap_err(), ApiError::humans_only());
}

// --- Against a database. ---

struct Org {
    _dir: tempfile::TempDir,
    store: Store,
    state: RealmState,
    owner: UserId,
    member: UserId,
}

fn org() -> Org {
    let (dir, store, config, mut state) = setup();
    let owner = state.users().next().unwrap().id;
    let member = add(&mut state, &store, &config, "m@acme.test", Role::Member);
    Org { _dir: dir, store, state, owner, member }
}

fn new_field(name: &str, field_type: i64) -> NewField {
    NewField {
        name: name.into(),
        hint: String::new(),
        field_type,
        field_data: Map::new(),
        display_in_profile_summary: false,
        required: false,
        editable_by_user: true,
        use_for_user_matching: false,
    }
}

fn add_field(org: &mut Org, name: &str, field_type: i64) -> FieldId {
    create_field(&mut org.state, &org.store, org.owner, new_field(name, field_type)).unwrap().0
}

fn set(org: &mut Org, target: UserId, data: Value) -> ApiResult<Vec<Outgoing>> {
    let acting = org.state.user(target).unwrap().clone();
    let change = validate_profile_data(&org.state, &acting, target, "data", data.as_array().unwrap())?;
    apply_profile_data(&mut org.state, &org.store, change)
}

fn reloaded(org: &Org) -> RealmState {
    RealmState::load(&org.store.conn().unwrap(), org.state.realm().id).unwrap().unwrap()
}

#[test]
fn person_pickers_take_active_humans_of_the_realm() {
    let mut org = org();
    let owner = org.owner;
    let picker = add_field(&mut org, "Mentor", field_type::USER);
    let member = org.member;
    org.state.user_mut(member).unwrap().is_bot = true;
    let err = set(&mut org, owner, json!([{"id": picker, "value": [member]}])).unwrap_err();
    assert_eq!(err.msg, format!("User with ID {member} is a bot"));
    org.state.user_mut(member).unwrap().is_bot = false;
    org.state.set_user_active(member, false);
    let err = set(&mut org, owner, json!([{"id": picker, "value": [member]}])).unwrap_err();
    assert_eq!(err.msg, format!("User with ID {member} is deactivated"));
    let err = set(&mut org, owner, json!([{"id": picker, "value": [12345]}])).unwrap_err();
    assert_eq!(err.msg, "Invalid user IDs: 12345");
}

#[test]
fn values_are_saved_and_events_name_only_real_changes() {
    let mut org = org();
    let member = org.member;
    let bio = add_field(&mut org, "Bio", field_type::SHORT_TEXT);
    let date = add_field(&mut org, "Birthday", field_type::DATE);
    let events = set(&mut org, member, json!([{"id": bio, "value": "*hi*"}, {"id": date, "value": "2000-01-31"}]));
    assert_eq!(events.unwrap().len(), 2);
    let again = set(&mut org, member, json!([{"id": bio, "value": "*hi*"}, {"id": date, "value": ""}]));
    let events = again.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].users, org.state.active_user_ids());
    assert_eq!(events[0].event.body()["person"]["custom_profile_field"], json!({"id": date, "value": null}));
    let member = org.state.user(org.member).unwrap();
    assert_eq!(
        Value::Object(crate::realm::format::profile_data_dict(member)),
        json!({bio.to_string(): {"value": "*hi*", "rendered_value": "<p><em>hi</em></p>"}})
    );
    assert_eq!(reloaded(&org).user(org.member).unwrap().profile_data, member.profile_data);
}

/// Text fields render Markdown with no link to a refused URL, in any disguise.
#[test]
fn hostile_urls_make_no_link_in_profile_values() {
    let mut org = org();
    let member = org.member;
    let short = add_field(&mut org, "Bio", field_type::SHORT_TEXT);
    let long = add_field(&mut org, "About", field_type::LONG_TEXT);
    let cases = crate::markdown::tests::HOSTILE.iter().chain(crate::markdown::tests::SAFE);
    for (source, html) in cases {
        let field = if source.chars().count() <= super::validate::SHORT_VALUE_MAX_LENGTH { short } else { long };
        set(&mut org, member, json!([{"id": field, "value": source}])).unwrap();
        let data = crate::realm::format::profile_data_dict(org.state.user(member).unwrap());
        assert_eq!(data[&field.to_string()], json!({"value": source, "rendered_value": html}), "{source}");
    }
}

#[test]
fn a_refused_list_writes_nothing_and_deleting_a_field_drops_its_values() {
    let mut org = org();
    let member = org.member;
    let bio = add_field(&mut org, "Bio", field_type::SHORT_TEXT);
    let site = add_field(&mut org, "Site", field_type::URL);
    let err = set(&mut org, member, json!([{"id": bio, "value": "x"}, {"id": site, "value": "nope"}]));
    assert_eq!(err.unwrap_err().msg, "Site is not a URL");
    assert!(org.state.user(org.member).unwrap().profile_data.is_empty());
    set(&mut org, member, json!([{"id": bio, "value": "x"}, {"id": site, "value": "https://a.io"}])).unwrap();
    let change = plan_delete(&org.state, org.owner, bio.0).unwrap();
    commit(&mut org.state, &org.store, change).unwrap();
    let keys: Vec<FieldId> = org.state.user(org.member).unwrap().profile_data.keys().copied().collect();
    assert_eq!(keys, vec![site]);
    let state = reloaded(&org);
    assert_eq!(state.user(org.member).unwrap().profile_data.keys().copied().collect::<Vec<_>>(), vec![site]);
    assert_eq!(state.profile_fields(), org.state.profile_fields());
}

#[test]
fn members_cannot_define_fields() {
    let mut org = org();
    let err = create_field(&mut org.state, &org.store, org.member, new_field("X", 1)).unwrap_err();
    assert_eq!(err, ApiError::must_be_admin());
    assert!(org.state.profile_fields().is_empty());
}
