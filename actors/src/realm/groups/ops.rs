//! User group operations: each validates against the state with Zulip's messages, writes
//! in one transaction, then applies the change and returns the events.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::events::{Event, Outgoing};
use crate::ids::{GroupId, UserId};
use crate::realm::catalog::{self, GroupPermission, Kind};
use crate::realm::group_setting::{GroupSettingChange, GroupSettingValue};
use crate::realm::model::UserGroup;
use crate::realm::permissions::has_realm_permission;
use crate::realm::state::RealmState;
use crate::store::{self, Store};

/// Longest group name (`NamedUserGroup.MAX_NAME_LENGTH`).
pub const MAX_GROUP_NAME_LENGTH: usize = 100;

/// Prefixes a group name may not start with (`NamedUserGroup.INVALID_NAME_PREFIXES`).
const INVALID_NAME_PREFIXES: [&str; 5] = ["@", "role:", "user:", "stream:", "channel:"];

/// Setting names of the permission checks on a group.
const CAN_MANAGE: &str = "can_manage_group";
const CAN_ADD_MEMBERS: &str = "can_add_members_group";
const CAN_JOIN: &str = "can_join_group";
const CAN_LEAVE: &str = "can_leave_group";
const CAN_REMOVE_MEMBERS: &str = "can_remove_members_group";

/// `POST /user_groups/create`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct NewGroup {
    pub name: String,
    pub description: String,
    pub members: Vec<i64>,
    pub subgroups: Option<Vec<i64>>,
    /// Raw API values of the `can_*_group` parameters given, by setting name.
    pub settings: Vec<(String, Value)>,
}

/// `PATCH /user_groups/{id}`, as parsed by the HTTP layer.
#[derive(Debug, Clone, Default)]
pub struct GroupUpdate {
    pub name: Option<String>,
    pub description: Option<String>,
    /// Raw `{"new": .., "old": ..}` values of the `can_*_group` parameters given.
    pub settings: Vec<(String, Value)>,
    pub deactivated: Option<bool>,
}

/// `POST /user_groups/{id}/members` and `/subgroups`: the lists given (absent = empty).
#[derive(Debug, Clone, Default)]
pub struct MembershipChange {
    pub add: Vec<i64>,
    pub delete: Vec<i64>,
    pub add_subgroups: Vec<i64>,
    pub delete_subgroups: Vec<i64>,
}

/// Which endpoint a membership change came through (they differ in one message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MembershipEndpoint {
    Members,
    Subgroups,
}

impl MembershipEndpoint {
    fn nothing_to_do(self) -> ApiError {
        ApiError::bad_request(match self {
            Self::Members => {
                "Nothing to do. Specify at least one of \"add\", \"delete\", \"add_subgroups\" or \"delete_subgroups\"."
            }
            Self::Subgroups => "Nothing to do. Specify at least one of \"add\" or \"delete\".",
        })
    }
}

// --- Access checks. ---

fn insufficient_permission() -> ApiError {
    ApiError::bad_request("Insufficient permission")
}

/// The rule of a user-group permission setting.
fn group_permission(name: &str) -> Option<&'static GroupPermission> {
    catalog::USER_GROUP_PERMISSION_SETTINGS.iter().find(|p| p.name == name)
}

/// Whether `user` holds the group's own permission `name`.
fn has_group_permission(state: &RealmState, group: &UserGroup, name: &str, user: UserId) -> bool {
    group_permission(name)
        .is_some_and(|p| state.has_group_permission(&state.group_setting_of(group, name), &p.rule, user))
}

/// A group by id: "Invalid user group" when unknown, "User group is deactivated." when
/// deactivated unless allowed (`get_user_group_by_id_in_realm`).
fn find_group(state: &RealmState, id: GroupId, allow_deactivated: bool) -> ApiResult<&UserGroup> {
    let group = state.group(id).ok_or_else(|| ApiError::bad_request("Invalid user group"))?;
    if group.deactivated && !allow_deactivated {
        return Err(ApiError::bad_request("User group is deactivated."));
    }
    Ok(group)
}

/// Zulip's `access_user_group_for_update`: system groups are never changed; managers of
/// all groups and of this group may do anything; others need `permission`.
fn access_for_update<'s>(
    state: &'s RealmState,
    id: GroupId,
    user: UserId,
    permission: &str,
    allow_deactivated: bool,
) -> ApiResult<&'s UserGroup> {
    let group = find_group(state, id, allow_deactivated)?;
    if group.is_system_group {
        return Err(insufficient_permission());
    }
    let allowed = has_realm_permission(state, "can_manage_all_groups", user)
        || has_group_permission(state, group, CAN_MANAGE, user)
        || (permission != CAN_MANAGE && has_group_permission(state, group, permission, user));
    if allowed {
        Ok(group)
    } else {
        Err(insufficient_permission())
    }
}

/// Access for a change of one's own membership: `own` (join or leave) or, failing that,
/// `general` (add or remove anyone); `general` alone for changes of others.
fn access_for_membership(
    state: &RealmState,
    id: GroupId,
    user: UserId,
    users: &[i64],
    own: &str,
    general: &str,
) -> ApiResult<()> {
    if users == [user.0] && access_for_update(state, id, user, own, true).is_ok() {
        return Ok(());
    }
    access_for_update(state, id, user, general, true).map(|_| ())
}

/// Zulip's `check_user_group_name`.
pub fn check_group_name(name: &str) -> ApiResult<()> {
    if name.trim().is_empty() {
        return Err(ApiError::bad_request("User group name can't be empty!"));
    }
    if name.chars().count() > MAX_GROUP_NAME_LENGTH {
        return Err(ApiError::bad_request(format!(
            "User group name cannot exceed {MAX_GROUP_NAME_LENGTH} characters."
        )));
    }
    if let Some(prefix) = INVALID_NAME_PREFIXES.iter().find(|p| name.starts_with(**p)) {
        return Err(ApiError::bad_request(format!("User group name cannot start with '{prefix}'.")));
    }
    Ok(())
}

/// Refuses a name another group of the realm has.
fn check_name_free(state: &RealmState, name: &str, except: Option<GroupId>) -> ApiResult<()> {
    if state.groups().any(|g| g.name == name && Some(g.id) != except) {
        return Err(ApiError::bad_request(format!("User group '{name}' already exists.")));
    }
    Ok(())
}

/// Groups that may become subgroups: every id names a group of the realm ("Invalid user
/// group ID: N" for the first that does not), and none is deactivated.
fn potential_subgroups(state: &RealmState, ids: &[i64]) -> ApiResult<Vec<GroupId>> {
    if let Some(missing) = ids.iter().find(|&&id| state.group(GroupId(id)).is_none()) {
        return Err(ApiError::bad_request(format!("Invalid user group ID: {missing}")));
    }
    let unique: BTreeSet<GroupId> = ids.iter().map(|&id| GroupId(id)).collect();
    for &id in &unique {
        find_group(state, id, false)?;
    }
    Ok(unique.into_iter().collect())
}

// --- Events. ---

/// A `user_group` event with these fields after `op`.
fn event(op: &str, fields: Value) -> Event {
    let mut body = Map::new();
    body.insert("op".into(), Value::from(op));
    if let Value::Object(rest) = fields {
        body.extend(rest);
    }
    Event::new("user_group", Value::Object(body))
}

/// A `user_group` event for every active user (Zulip's `active_user_ids`).
/// `update` with one changed field.
fn update_event(state: &RealmState, group: GroupId, key: &str, value: Value) -> Outgoing {
    let mut data = Map::new();
    data.insert(key.into(), value);
    state.to_everyone(event("update", json!({"group_id": group, "data": data})))
}

/// `add`: the group as `do_send_create_user_group_event` describes it.
fn add_event(state: &RealmState, group: &UserGroup, members: &BTreeSet<UserId>, subgroups: &[GroupId]) -> Outgoing {
    let mut dict = json!({
        "name": group.name,
        "creator_id": group.creator_id,
        "date_created": group.date_created,
        "members": members,
        "description": group.description,
        "id": group.id,
        "is_system_group": group.is_system_group,
        "direct_subgroup_ids": subgroups,
    });
    if let Value::Object(map) = &mut dict {
        for p in catalog::USER_GROUP_PERMISSION_SETTINGS {
            map.insert(p.name.into(), state.group_setting_api_value(&state.group_setting_of(group, p.name)).to_json());
        }
        map.insert("deactivated".into(), Value::Bool(group.deactivated));
    }
    state.to_everyone(event("add", json!({ "group": dict })))
}

/// A membership event: `add_members`/`remove_members` (`user_ids`) or
/// `add_subgroups`/`remove_subgroups` (`direct_subgroup_ids`).
fn membership_event(state: &RealmState, op: &str, group: GroupId, key: &str, ids: Vec<i64>) -> Outgoing {
    let mut body = Map::new();
    body.insert("group_id".into(), json!(group));
    body.insert(key.into(), json!(ids));
    state.to_everyone(event(op, Value::Object(body)))
}

// --- Creation. ---

/// The default of a setting on a group `creator` creates (`set_defaults_for_group_settings`).
fn default_setting(state: &RealmState, permission: &GroupPermission, creator: UserId) -> GroupSettingValue {
    match state.system_group_id(permission.default_group_name) {
        Some(id) => GroupSettingValue::Group(id),
        // "group_creator": an anonymous group of the creator.
        None => GroupSettingValue::Anonymous {
            direct_members: [creator].into_iter().collect(),
            direct_subgroups: BTreeSet::new(),
        },
    }
}

/// Parses the `can_*_group` parameters given, in Zulip's setting order.
fn parse_settings<T>(
    given: &[(String, Value)],
    parse: fn(&str, &Value) -> ApiResult<T>,
) -> ApiResult<Vec<(&'static GroupPermission, T)>> {
    catalog::USER_GROUP_PERMISSION_SETTINGS
        .iter()
        .filter_map(|p| given.iter().find(|(n, _)| n == p.name).map(|(_, v)| (p, v)))
        .map(|(p, v)| Ok((p, parse(p.name, v)?)))
        .collect()
}

/// `POST /user_groups/create`. Returns the new group's id.
pub fn create_group(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    new: NewGroup,
    now: i64,
) -> ApiResult<(GroupId, Vec<Outgoing>)> {
    crate::realm::permissions::require_member(state, acting)?;
    if !has_realm_permission(state, "can_create_groups", acting) {
        return Err(insufficient_permission());
    }
    let given = parse_settings(&new.settings, GroupSettingValue::from_api)?;
    let members = state.active_users_by_ids(&new.members)?;
    check_group_name(&new.name)?;
    let mut settings = Map::new();
    for p in catalog::USER_GROUP_PERMISSION_SETTINGS {
        let value = match given.iter().find(|(q, _)| q.name == p.name) {
            Some((_, v)) => state.check_group_setting(p.name, &p.rule, v.clone())?,
            None => default_setting(state, p, acting),
        };
        settings.insert(p.name.into(), value.to_json());
    }
    check_name_free(state, &new.name, None)?;
    let subgroups = potential_subgroups(state, new.subgroups.as_deref().unwrap_or_default())?;

    let mut group = UserGroup {
        id: GroupId(0),
        name: new.name,
        description: new.description,
        is_system_group: false,
        creator_id: Some(acting),
        date_created: Some(now),
        deactivated: false,
        settings,
        members: members.clone(),
        subgroups: subgroups.iter().copied().collect(),
    };
    let realm_id = state.realm().id;
    let member_list: Vec<UserId> = members.iter().copied().collect();
    group.id = store.write(|tx| {
        let id = store::groups::insert(tx, realm_id, &group)?;
        store::groups::add_members(tx, id, &member_list)?;
        store::groups::add_subgroups(tx, id, &subgroups)?;
        Ok::<_, ApiError>(id)
    })?;
    // Zulip announces the group without subgroups, then adds them.
    let mut events = vec![add_event(state, &group, &members, &[])];
    if !subgroups.is_empty() {
        let ids = subgroups.iter().map(|g| g.0).collect();
        events.push(membership_event(state, "add_subgroups", group.id, "direct_subgroup_ids", ids));
    }
    let id = group.id;
    state.put_group(group);
    Ok((id, events))
}

// --- Update. ---

/// `PATCH /user_groups/{id}`: name, description, permission settings, reactivation.
pub fn update_group(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: GroupId,
    update: GroupUpdate,
) -> ApiResult<Vec<Outgoing>> {
    crate::realm::permissions::require_member(state, acting)?;
    let changes = parse_settings(&update.settings, GroupSettingChange::from_api)?;
    if update.name.is_none() && update.description.is_none() && changes.is_empty() && update.deactivated.is_none() {
        return Err(ApiError::bad_request("No new data supplied"));
    }
    let mut group = access_for_update(state, id, acting, CAN_MANAGE, true)?.clone();
    let mut events = Vec::new();
    if let Some(name) = update.name.filter(|n| *n != group.name) {
        check_group_name(&name)?;
        check_name_free(state, &name, Some(id))?;
        let mut out = update_event(state, id, "name", json!(name));
        // Read by the queue filter (a rename of a deactivated group reaches only clients
        // that show deactivated groups), and removed before delivery.
        out.event.body_mut().insert("deactivated".into(), Value::Bool(group.deactivated));
        events.push(out);
        group.name = name;
    }
    if let Some(description) = update.description.filter(|d| *d != group.description) {
        events.push(update_event(state, id, "description", json!(description)));
        group.description = description;
    }
    if update.deactivated == Some(false) && group.deactivated {
        group.deactivated = false;
        events.push(update_event(state, id, "deactivated", Value::Bool(false)));
        let subgroups: Vec<GroupId> = group.subgroups.iter().copied().collect();
        let mut add = add_event(state, &group, &group.members, &subgroups);
        // Only for clients that had been told the group was removed.
        add.event.body_mut().insert("for_reactivation".into(), Value::Bool(true));
        events.push(add);
    }
    let nobody = state.nobody_group_id();
    for (permission, change) in changes {
        let current = state.group_setting_api_value(&state.group_setting_of(&group, permission.name));
        if change.is_change_from(&current, nobody)? {
            let value = state.check_group_setting(permission.name, &permission.rule, change.new)?;
            let shown = state.group_setting_api_value(&value).to_json();
            events.push(update_event(state, id, permission.name, shown));
            group.settings.insert(permission.name.into(), value.to_json());
        }
    }
    if events.is_empty() {
        return Ok(events);
    }
    store.write(|tx| store::groups::update(tx, &group))?;
    state.put_group(group);
    Ok(events)
}

// --- Membership. ---

/// `POST /user_groups/{id}/members` (`add`, `delete`, `add_subgroups`,
/// `delete_subgroups`) and `POST /user_groups/{id}/subgroups` (`add`, `delete` as subgroup
/// lists). The steps run in that order against one working copy; all or nothing.
pub fn change_membership(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: GroupId,
    change: MembershipChange,
    endpoint: MembershipEndpoint,
) -> ApiResult<Vec<Outgoing>> {
    crate::realm::permissions::require_member(state, acting)?;
    let MembershipChange { add, delete, add_subgroups, delete_subgroups } = change;
    if add.is_empty() && delete.is_empty() && add_subgroups.is_empty() && delete_subgroups.is_empty() {
        return Err(endpoint.nothing_to_do());
    }
    let mut work = Work { state, acting, id, group: None, changes: Changes::default(), events: Vec::new() };
    if !add.is_empty() {
        work.add_members(&add)?;
    }
    if !delete.is_empty() {
        work.remove_members(&delete)?;
    }
    if !add_subgroups.is_empty() {
        work.add_subgroups(&add_subgroups)?;
    }
    if !delete_subgroups.is_empty() {
        work.remove_subgroups(&delete_subgroups)?;
    }
    let Work { group, changes, events, .. } = work;
    let Some(group) = group else { return Ok(events) };
    store.write(|tx| {
        store::groups::add_members(tx, id, &changes.added)?;
        store::groups::remove_members(tx, id, &changes.removed)?;
        store::groups::add_subgroups(tx, id, &changes.subgroups_added)?;
        store::groups::remove_subgroups(tx, id, &changes.subgroups_removed)
    })?;
    state.put_group(group);
    Ok(events)
}

/// What a membership change writes.
#[derive(Default)]
struct Changes {
    added: Vec<UserId>,
    removed: Vec<UserId>,
    subgroups_added: Vec<GroupId>,
    subgroups_removed: Vec<GroupId>,
}

/// A membership change in progress: each step checks its permission against the state and
/// its preconditions against the working copy of the group.
struct Work<'s> {
    state: &'s RealmState,
    acting: UserId,
    id: GroupId,
    group: Option<UserGroup>,
    changes: Changes,
    events: Vec<Outgoing>,
}

impl Work<'_> {
    /// The working copy of the group, made on first use.
    fn group(&mut self) -> ApiResult<&mut UserGroup> {
        if self.group.is_none() {
            self.group = Some(find_group(self.state, self.id, true)?.clone());
        }
        self.group.as_mut().ok_or_else(ApiError::internal)
    }

    fn event(&mut self, op: &str, key: &str, ids: Vec<i64>) {
        self.events.push(membership_event(self.state, op, self.id, key, ids));
    }

    /// `add`: oneself with `can_join_group`, anyone with `can_add_members_group`.
    fn add_members(&mut self, add: &[i64]) -> ApiResult<()> {
        access_for_membership(self.state, self.id, self.acting, add, CAN_JOIN, CAN_ADD_MEMBERS)?;
        let users = self.state.active_users_by_ids(add)?;
        let group = self.group()?;
        if let Some(u) = users.iter().find(|u| group.members.contains(u)) {
            return Err(ApiError::bad_request(format!("User {} is already a member of this group", u.0)));
        }
        group.members.extend(users.iter().copied());
        self.changes.added = users.into_iter().collect();
        self.event("add_members", "user_ids", self.changes.added.iter().map(|u| u.0).collect());
        Ok(())
    }

    /// `delete`: oneself with `can_leave_group`, anyone with `can_remove_members_group`.
    fn remove_members(&mut self, delete: &[i64]) -> ApiResult<()> {
        let users = self.state.active_users_by_ids(delete)?;
        access_for_membership(self.state, self.id, self.acting, delete, CAN_LEAVE, CAN_REMOVE_MEMBERS)?;
        let group = self.group()?;
        if let Some(missing) = delete.iter().find(|&&u| !group.members.contains(&UserId(u))) {
            return Err(ApiError::bad_request(format!("There is no member '{missing}' in this user group")));
        }
        for u in &users {
            group.members.remove(u);
        }
        self.changes.removed = users.into_iter().collect();
        self.event("remove_members", "user_ids", self.changes.removed.iter().map(|u| u.0).collect());
        Ok(())
    }

    /// `add_subgroups` (`can_add_members_group`), refusing cycles.
    fn add_subgroups(&mut self, ids: &[i64]) -> ApiResult<()> {
        let (state, id) = (self.state, self.id);
        access_for_update(state, id, self.acting, CAN_ADD_MEMBERS, true)?;
        let subs = potential_subgroups(state, ids)?;
        let group = self.group()?;
        if let Some(sub) = subs.iter().find(|s| group.subgroups.contains(s)) {
            return Err(ApiError::bad_request(format!("User group {} is already a subgroup of this group.", sub.0)));
        }
        if state.recursive_subgroups(subs.iter().copied()).contains(&id) {
            return Err(ApiError::bad_request(format!(
                "User group {} is already a subgroup of one of the passed subgroups.",
                id.0
            )));
        }
        group.subgroups.extend(subs.iter().copied());
        self.event("add_subgroups", "direct_subgroup_ids", subs.iter().map(|g| g.0).collect());
        self.changes.subgroups_added = subs;
        Ok(())
    }

    /// `delete_subgroups` (`can_manage_group`).
    fn remove_subgroups(&mut self, ids: &[i64]) -> ApiResult<()> {
        access_for_update(self.state, self.id, self.acting, CAN_MANAGE, true)?;
        let subs = potential_subgroups(self.state, ids)?;
        let group = self.group()?;
        if let Some(sub) = subs.iter().find(|s| !group.subgroups.contains(s)) {
            return Err(ApiError::bad_request(format!("User group {} is not a subgroup of this group.", sub.0)));
        }
        for sub in &subs {
            group.subgroups.remove(sub);
        }
        self.event("remove_subgroups", "direct_subgroup_ids", subs.iter().map(|g| g.0).collect());
        self.changes.subgroups_removed = subs;
        Ok(())
    }
}

// --- Deactivation. ---

/// Objections of unarchived channels whose permission settings use the group
/// (`{"type": "channel", "channel_id": N, "settings": [..]}`).
pub fn channel_setting_objections(state: &RealmState, group: GroupId) -> Vec<Value> {
    crate::realm::channels::format::channels_using_group(state, group)
}

/// Why a group cannot be deactivated (`access_user_group_for_deactivation`), in Zulip's
/// order: active supergroups, channel settings, other active groups' settings, realm
/// settings. A setting uses the group when it is its value or a direct subgroup of its
/// anonymous value.
pub fn deactivation_objections(state: &RealmState, id: GroupId) -> Vec<Value> {
    let mut objections = Vec::new();
    let supergroups: Vec<GroupId> =
        state.groups().filter(|g| !g.deactivated && g.subgroups.contains(&id)).map(|g| g.id).collect();
    if !supergroups.is_empty() {
        objections.push(json!({"type": "subgroup", "supergroup_ids": supergroups}));
    }
    objections.extend(channel_setting_objections(state, id));
    for group in state.groups().filter(|g| !g.deactivated) {
        let settings: Vec<&str> = catalog::USER_GROUP_PERMISSION_SETTINGS
            .iter()
            .map(|p| p.name)
            .filter(|name| state.group_setting_of(group, name).uses_group(id))
            .collect();
        if !settings.is_empty() {
            objections.push(json!({"type": "user_group", "group_id": group.id, "settings": settings}));
        }
    }
    let realm_settings: Vec<&str> = catalog::REALM_SETTINGS
        .iter()
        .filter(|s| matches!(s.kind, Kind::Group(_)))
        .filter(|s| {
            GroupSettingValue::from_json(&s.value(&state.realm().settings, Some(state)))
                .is_some_and(|v| v.uses_group(id))
        })
        .map(|s| s.name)
        .collect();
    if !realm_settings.is_empty() {
        objections.push(json!({"type": "realm", "settings": realm_settings}));
    }
    objections
}

/// `POST /user_groups/{id}/deactivate`.
pub fn deactivate_group(
    state: &mut RealmState,
    store: &Store,
    acting: UserId,
    id: GroupId,
) -> ApiResult<Vec<Outgoing>> {
    let mut group = access_for_update(state, id, acting, CAN_MANAGE, false)?.clone();
    let objections = deactivation_objections(state, id);
    if !objections.is_empty() {
        return Err(ApiError::new(ErrorCode::CannotDeactivateGroupInUse, 400, "Cannot deactivate user group in use.")
            .with("objections", objections));
    }
    group.deactivated = true;
    store.write(|tx| store::groups::update(tx, &group))?;
    state.put_group(group);
    Ok(vec![
        update_event(state, id, "deactivated", Value::Bool(true)),
        state.to_everyone(event("remove", json!({ "group_id": id }))),
    ])
}

// --- Reads. ---

/// `GET /user_groups`.
pub fn list_groups(state: &RealmState, viewer: UserId, include_deactivated: bool) -> ApiResult<Vec<Value>> {
    crate::realm::permissions::require_member(state, viewer)?;
    Ok(state
        .groups()
        .filter(|g| include_deactivated || !g.deactivated)
        .map(|g| Value::Object(state.group_dict(g)))
        .collect())
}

/// `GET /user_groups/{id}/members`: active members, recursive unless `direct_only`.
pub fn group_members(state: &RealmState, viewer: UserId, id: GroupId, direct_only: bool) -> ApiResult<Vec<UserId>> {
    crate::realm::permissions::require_member(state, viewer)?;
    let group = find_group(state, id, false)?;
    Ok(if direct_only {
        group.members.iter().copied().filter(|u| state.user(*u).is_some_and(|u| u.is_active)).collect()
    } else {
        state.recursive_members([id]).into_iter().collect()
    })
}

/// `GET /user_groups/{id}/members/{user_id}`.
pub fn is_group_member(
    state: &RealmState,
    viewer: UserId,
    id: GroupId,
    target: UserId,
    direct_only: bool,
) -> ApiResult<bool> {
    crate::realm::permissions::require_member(state, viewer)?;
    find_group(state, id, false)?;
    let user = state.user(target).filter(|u| !u.is_bot).ok_or_else(|| ApiError::bad_request("No such user"))?;
    if !user.is_active {
        return Err(ApiError::bad_request("User is deactivated"));
    }
    Ok(group_members(state, viewer, id, direct_only)?.contains(&target))
}

/// `GET /user_groups/{id}/subgroups`: recursive (the group itself excluded) unless
/// `direct_only`.
pub fn subgroups_of(state: &RealmState, viewer: UserId, id: GroupId, direct_only: bool) -> ApiResult<Vec<GroupId>> {
    crate::realm::permissions::require_member(state, viewer)?;
    let group = find_group(state, id, false)?;
    Ok(if direct_only {
        group.subgroups.iter().copied().collect()
    } else {
        let mut all = state.recursive_subgroups(group.subgroups.iter().copied());
        all.remove(&id);
        all.into_iter().collect()
    })
}

#[cfg(test)]
mod tests;
