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

// --- Planned and applied in memory. ---

mod in_memory {
    use serde_json::json;

    use super::{new, plan_create_folder, plan_reorder_folders, plan_update_folder, FolderChanges};
    use crate::error::ApiError;
    use crate::events::Event;
    use crate::ids::{FolderId, UserId};
    use crate::realm::channels::tests::memory::{add_channel, add_user, organization, OWNER, T0};
    use crate::realm::model::{ChannelFolder, Role};
    use crate::realm::state::RealmState;
    use crate::realm::Change;

    fn folder(id: i64, name: &str) -> ChannelFolder {
        ChannelFolder {
            id: FolderId(id),
            name: name.into(),
            description: String::new(),
            rendered_description: String::new(),
            order: id,
            is_archived: false,
            creator_id: Some(OWNER),
            date_created: T0,
        }
    }

    /// An organization with an owner (1), a moderator (2), a guest (3) and folders 1 and 2.
    fn organization_with_folders() -> RealmState {
        let mut state = organization();
        add_user(&mut state, 2, Role::Moderator);
        add_user(&mut state, 3, Role::Guest);
        state.put_folder(folder(1, "Frontend"));
        state.put_folder(folder(2, "Backend"));
        state
    }

    #[test]
    fn the_role_is_checked_before_the_parameters() {
        let state = organization_with_folders();
        let moderator = UserId(2);
        let unparsed = || ApiError::missing_argument("name");
        let must_be_admin = "Must be an organization administrator";
        assert_eq!(plan_create_folder(&state, moderator, Err(unparsed()), T0).unwrap_err().msg, must_be_admin);
        assert_eq!(plan_create_folder(&state, OWNER, Err(unparsed()), T0).unwrap_err(), unparsed());
        let not_found = || ApiError::not_found();
        let refused = plan_update_folder(&state, moderator, Err(not_found()), Err(unparsed())).unwrap_err();
        assert_eq!(refused.msg, must_be_admin);
        // The path first, then the parameters.
        assert_eq!(plan_update_folder(&state, OWNER, Err(not_found()), Err(unparsed())).unwrap_err(), not_found());
        assert_eq!(plan_update_folder(&state, OWNER, Ok(1), Err(unparsed())).unwrap_err(), unparsed());
        let order = || ApiError::missing_argument("order");
        assert_eq!(plan_reorder_folders(&state, moderator, Err(order())).unwrap_err().msg, must_be_admin);
        assert_eq!(plan_reorder_folders(&state, OWNER, Err(order())).unwrap_err(), order());
    }

    #[test]
    fn a_new_folder_goes_last_and_is_announced_to_everyone() {
        let mut state = organization_with_folders();
        let taken = plan_create_folder(&state, OWNER, Ok(new("frontEND", "")), T0).unwrap_err();
        assert_eq!(taken.msg, "Channel folder 'frontEND' already exists");
        let change = plan_create_folder(&state, OWNER, Ok(new("Docs", "*read*")), T0).unwrap();
        let applied = change.once_written(FolderId(3)).apply(&mut state);
        assert_eq!(applied.output, FolderId(3));
        let created = state.folder(FolderId(3)).unwrap();
        assert_eq!((created.order, created.rendered_description.as_str()), (3, "<p><em>read</em></p>"));
        assert_eq!(applied.events.len(), 1);
        assert_eq!(applied.events[0].users, state.active_user_ids());
        let dict = json!({
            "id": 3, "name": "Docs", "description": "*read*", "rendered_description": "<p><em>read</em></p>",
            "order": 3, "date_created": T0, "creator_id": 1, "is_archived": false,
        });
        assert_eq!(applied.events[0].event, Event::new("channel_folder", json!({"op": "add", "channel_folder": dict})));
    }

    #[test]
    fn each_changed_property_is_its_own_update() {
        let mut state = organization_with_folders();
        let changes =
            FolderChanges { name: Some("Web".into()), description: Some("d".into()), is_archived: Some(false) };
        let applied = plan_update_folder(&state, OWNER, Ok(1), Ok(changes.clone())).unwrap().apply(&mut state);
        let update = |data| Event::new("channel_folder", json!({"op": "update", "channel_folder_id": 1, "data": data}));
        let events: Vec<Event> = applied.events.iter().map(|o| o.event.clone()).collect();
        assert_eq!(
            events,
            vec![
                update(json!({"name": "Web"})),
                update(json!({"description": "d", "rendered_description": "<p>d</p>"}))
            ]
        );
        assert_eq!(state.folder(FolderId(1)).unwrap().name, "Web");
        // The same values again: nothing to write, nothing sent.
        assert!(plan_update_folder(&state, OWNER, Ok(1), Ok(changes)).unwrap().apply(&mut state).events.is_empty());
        // A folder holding a channel (archived or not) stays active.
        let mut channel_state = state.clone();
        add_channel(&mut channel_state, 10, "general", false);
        let mut channel = channel_state.channel(crate::ids::ChannelId(10)).unwrap().clone();
        channel.folder_id = Some(FolderId(1));
        channel_state.put_channel(channel);
        let archive = FolderChanges { is_archived: Some(true), ..FolderChanges::default() };
        let refused = plan_update_folder(&channel_state, OWNER, Ok(1), Ok(archive.clone())).unwrap_err();
        assert_eq!(refused.msg, "You need to remove all the channels from this folder to archive it.");
        let applied = plan_update_folder(&state, OWNER, Ok(1), Ok(archive)).unwrap().apply(&mut state);
        assert_eq!(applied.events[0].event, update(json!({"is_archived": true})));
        assert_eq!(
            plan_update_folder(&state, OWNER, Ok(9), Ok(FolderChanges::default())).unwrap_err().msg,
            "Invalid channel folder ID"
        );
    }

    #[test]
    fn reordering_lists_every_folder() {
        let mut state = organization_with_folders();
        assert_eq!(plan_reorder_folders(&state, OWNER, Ok(vec![2])).unwrap_err().msg, "Invalid order mapping");
        let applied = plan_reorder_folders(&state, OWNER, Ok(vec![2, 1])).unwrap().apply(&mut state);
        assert_eq!((state.folder(FolderId(2)).unwrap().order, state.folder(FolderId(1)).unwrap().order), (0, 1));
        assert_eq!(applied.events[0].event, Event::new("channel_folder", json!({"op": "reorder", "order": [2, 1]})));
        assert_eq!(applied.events[0].users, vec![UserId(1), UserId(2), UserId(3)]);
    }
}
