//! Mutes planned and applied on an organization built in memory, and what a mute does to
//! new messages.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::ops::{plan_mute, plan_unmute};
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{bot, edit_user, realm, user, T0};
use crate::realm::chat::flag;
use crate::realm::chat::send::{plan_send, DirectRef, SendMessage, SendTo};
use crate::realm::model::Role;
use crate::realm::state::RealmState;
use crate::realm::Change;

fn events(state: &mut RealmState, change: impl Change) -> Vec<(Value, Vec<UserId>)> {
    change.apply(state).events.into_iter().map(|o| (Value::Object(o.event.body().clone()), o.users)).collect()
}

#[test]
fn mutes_are_checked_in_zulips_order() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let cordelia = user(&mut state, "cordelia", Role::Member);
    let robot = bot(&mut state, "robot", cordelia);
    let gone = user(&mut state, "gone", Role::Member);
    edit_user(&mut state, gone, |u| u.is_active = false);
    let mute_err = |state: &RealmState, id: i64| plan_mute(state, hamlet, id, T0).err().map(|e| e.msg);
    assert_eq!(mute_err(&state, hamlet.0).as_deref(), Some("Cannot mute self"));
    assert_eq!(mute_err(&state, 999).as_deref(), Some("No such user"));
    // Bots and deactivated users may be muted.
    assert_eq!(mute_err(&state, robot.0), None);
    assert_eq!(mute_err(&state, gone.0), None);
    let unmute_err = |state: &RealmState, id: i64| plan_unmute(state, hamlet, id).err().map(|e| e.msg);
    assert_eq!(unmute_err(&state, 999).as_deref(), Some("No such user"));
    assert_eq!(unmute_err(&state, hamlet.0).as_deref(), Some("User is not muted"));
    assert_eq!(unmute_err(&state, cordelia.0).as_deref(), Some("User is not muted"));

    let change = plan_mute(&state, hamlet, cordelia.0, T0 + 1).unwrap();
    let list = json!([{"id": cordelia, "timestamp": T0 + 1}]);
    assert_eq!(events(&mut state, change), vec![(json!({"type": "muted_users", "muted_users": list}), vec![hamlet])]);
    assert_eq!(mute_err(&state, cordelia.0).as_deref(), Some("User already muted"));
    let change = plan_mute(&state, hamlet, robot.0, T0 + 2).unwrap();
    events(&mut state, change);
    assert_eq!(
        super::muted_users_list(&state, hamlet),
        json!([{"id": cordelia, "timestamp": T0 + 1}, {"id": robot, "timestamp": T0 + 2}])
    );
    let change = plan_unmute(&state, hamlet, cordelia.0).unwrap();
    let list = json!([{"id": robot, "timestamp": T0 + 2}]);
    assert_eq!(events(&mut state, change), vec![(json!({"type": "muted_users", "muted_users": list}), vec![hamlet])]);
    assert!(!state.user_data().has_muted(hamlet, cordelia));
}

#[test]
fn a_muted_senders_new_messages_arrive_read_for_the_muter() {
    let mut state = realm();
    let hamlet = user(&mut state, "hamlet", Role::Member);
    let cordelia = user(&mut state, "cordelia", Role::Member);
    let othello = user(&mut state, "othello", Role::Member);
    let change = plan_mute(&state, hamlet, cordelia.0, T0).unwrap();
    events(&mut state, change);
    let dm = |sender: UserId, to: &[UserId]| SendMessage {
        sender,
        to: SendTo::Direct(DirectRef::Ids(to.iter().map(|u| u.0).collect())),
        topic: None,
        content: "hello".into(),
        client: "test".into(),
        queue_id: None,
        local_id: None,
        read_by_sender: Some(false),
    };
    let private = flag::IS_PRIVATE;
    let planned = plan_send(&state, dm(cordelia, &[hamlet, othello]), &BTreeSet::new(), T0).unwrap();
    assert_eq!(planned.flags(), [(hamlet, private | flag::READ), (cordelia, private), (othello, private)]);
    // Only messages the muted user sends.
    let planned = plan_send(&state, dm(othello, &[hamlet, cordelia]), &BTreeSet::new(), T0).unwrap();
    assert_eq!(planned.flags(), [(hamlet, private), (cordelia, private), (othello, private)]);
}
