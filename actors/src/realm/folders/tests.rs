//! Folder changes: against a real (temporary) database, then planned and applied on
//! organizations built in memory.

use serde_json::{json, Map};

use super::ops::{plan_create_folder, plan_reorder_folders, plan_update_folder};
use super::*;
use crate::error::ApiError;
use crate::events::{Event, Outgoing};
use crate::ids::ChannelId;
use crate::realm::commit;
use crate::realm::model::{Channel, Role};
use crate::realm::state::RealmState;
use crate::realm::tests::{add, setup};
use crate::store::Store;

/// Creates a folder outside any actor: plans, then commits.
fn create_folder(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    new: NewFolder,
    now: i64,
) -> ApiResult<(FolderId, Vec<Outgoing>)> {
    let applied = commit(state, store, plan_create_folder(state, acting, Ok(new), now)?)?;
    Ok((applied.output, applied.events))
}

/// Changes a folder outside any actor: plans, then commits.
fn update_folder(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: i64,
    changes: FolderChanges,
) -> ApiResult<Vec<Outgoing>> {
    Ok(commit(state, store, plan_update_folder(state, acting, Ok(id), Ok(changes))?)?.events)
}

/// Reorders the folders outside any actor: plans, then commits.
fn reorder_folders(state: &mut RealmState, store: &Store, acting: UserId, order: Vec<i64>) -> ApiResult<Vec<Outgoing>> {
    Ok(commit(state, store, plan_reorder_folders(state, acting, Ok(order))?)?.events)
}

const T1: i64 = 1_800_000_000;

fn new(name: &str, description: &str) -> NewFolder {
    NewFolder { name: name.into(), description: description.into() }
}

fn owner(state: &RealmState) -> UserId {
    state.users().find(|u| u.role == Role::Owner).map(|u| u.id).unwrap()
}

fn message(err: ApiError) -> String {
    err.msg
}

fn channel_in(id: i64, folder: FolderId) -> Channel {
    Channel {
        id: ChannelId(id),
        name: format!("c{id}"),
        description: String::new(),
        rendered_description: String::new(),
        invite_only: false,
        is_web_public: false,
        history_public_to_subscribers: true,
        message_retention_days: None,
        topics_policy: "inherit".into(),
        folder_id: Some(folder),
        creator_id: None,
        date_created: T1,
        is_archived: true,
        settings: Map::new(),
    }
}

#[test]
fn unprintable_positions_count_characters_from_one() {
    assert_eq!(crate::validate::first_unprintable("abc"), None);
    assert_eq!(crate::validate::first_unprintable("abc\0"), Some(4));
    assert_eq!(crate::validate::first_unprintable("é\u{7}"), Some(2));
    assert_eq!(crate::validate::first_unprintable("x\u{FDD0}"), Some(2));
    assert_eq!(crate::validate::first_unprintable("\u{1FFFF}"), Some(1));
    assert_eq!(crate::validate::first_unprintable("日本 語"), None);
}

#[test]
fn a_new_folder_goes_last_and_renders_its_description() {
    let (_dir, store, _config, mut state) = setup();
    let boss = owner(&state);
    let (a, _) = create_folder(&mut state, &store, boss, new("A", "**x**"), T1).unwrap();
    let (b, events) = create_folder(&mut state, &store, boss, new("B", ""), T1).unwrap();
    assert_eq!(state.folder(a).unwrap().rendered_description, "<p><strong>x</strong></p>");
    assert_eq!(state.folder(b).unwrap().order, b.0);
    assert_eq!(events[0].users, state.active_user_ids());
    let ids: Vec<i64> = folder_dicts(&state, true).iter().map(|f| f["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![a.0, b.0]);
}

#[test]
fn names_are_checked_case_insensitively_against_every_folder() {
    let (_dir, store, _config, mut state) = setup();
    let boss = owner(&state);
    let (a, _) = create_folder(&mut state, &store, boss, new("Frontend", ""), T1).unwrap();
    let changes = FolderChanges { is_archived: Some(true), ..Default::default() };
    update_folder(&mut state, &store, boss, a.0, changes).unwrap();
    let err = create_folder(&mut state, &store, boss, new("FRONTEND", ""), T1).unwrap_err();
    assert_eq!(message(err), "Channel folder 'FRONTEND' already exists");
    let err = create_folder(&mut state, &store, boss, new("  ", ""), T1).unwrap_err();
    assert_eq!(message(err), "Channel folder name can't be empty.");
}

#[test]
fn members_cannot_change_folders() {
    let (_dir, store, config, mut state) = setup();
    let member = add(&mut state, &store, &config, "m@acme.test", Role::Moderator);
    let err = create_folder(&mut state, &store, member, new("A", ""), T1).unwrap_err();
    assert_eq!(message(err), "Must be an organization administrator");
    assert_eq!(state.folders().count(), 0);
}

#[test]
fn unchanged_values_send_nothing_and_refusals_change_nothing() {
    let (_dir, store, _config, mut state) = setup();
    let boss = owner(&state);
    let (a, _) = create_folder(&mut state, &store, boss, new("A", "d"), T1).unwrap();
    let same = FolderChanges { name: Some("A".into()), description: Some("d".into()), is_archived: Some(false) };
    assert!(update_folder(&mut state, &store, boss, a.0, same).unwrap().is_empty());

    state.put_channel(channel_in(1, a));
    let refused = FolderChanges { name: Some("B".into()), is_archived: Some(true), ..Default::default() };
    let err = update_folder(&mut state, &store, boss, a.0, refused).unwrap_err();
    assert_eq!(message(err), "You need to remove all the channels from this folder to archive it.");
    assert_eq!(state.folder(a).unwrap().name, "A");
}

#[test]
fn reorder_needs_every_folder_and_lets_the_last_position_win() {
    let (_dir, store, _config, mut state) = setup();
    let boss = owner(&state);
    let (a, _) = create_folder(&mut state, &store, boss, new("A", ""), T1).unwrap();
    let (b, _) = create_folder(&mut state, &store, boss, new("B", ""), T1).unwrap();
    let err = reorder_folders(&mut state, &store, boss, vec![a.0, 999]).unwrap_err();
    assert_eq!(message(err), "Invalid order mapping");
    let events = reorder_folders(&mut state, &store, boss, vec![a.0, b.0, 999, a.0]).unwrap();
    assert_eq!(events[0].event, Event::new("channel_folder", json!({"op": "reorder", "order": [a.0, b.0, 999, a.0]})));
    assert_eq!((state.folder(a).unwrap().order, state.folder(b).unwrap().order), (3, 1));
    let ids: Vec<i64> = folder_dicts(&state, true).iter().map(|f| f["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![b.0, a.0]);
}

#[test]
fn channels_may_name_any_active_folder_of_the_organization() {
    let (_dir, store, _config, mut state) = setup();
    let boss = owner(&state);
    let (a, _) = create_folder(&mut state, &store, boss, new("A", ""), T1).unwrap();
    assert_eq!(check_folder_for_channel(&state, a.0).unwrap(), a);
    assert_eq!(message(check_folder_for_channel(&state, a.0 + 1).unwrap_err()), "Invalid channel folder ID");
    let archive = FolderChanges { is_archived: Some(true), ..Default::default() };
    update_folder(&mut state, &store, boss, a.0, archive).unwrap();
    assert_eq!(message(check_folder_for_channel(&state, a.0).unwrap_err()), "Invalid channel folder ID");
}
