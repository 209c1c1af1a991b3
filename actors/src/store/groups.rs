//! The `user_groups` table and its membership tables.

use std::collections::BTreeMap;

use rusqlite::{params, Connection};
use serde_json::{Map, Value};

use super::realms::json_object;
use super::{flag, StoreResult};
use crate::ids::{GroupId, RealmId, UserId};
use crate::realm::model::UserGroup;

/// Every group of a realm with its direct members and subgroups, by id.
pub fn in_realm(conn: &Connection, realm_id: RealmId) -> StoreResult<BTreeMap<GroupId, UserGroup>> {
    let mut stmt = conn.prepare(
        "SELECT id, name, description, is_system_group, creator_id, date_created, deactivated, settings
         FROM user_groups WHERE realm_id = ?1 ORDER BY id",
    )?;
    let rows = stmt
        .query_map([realm_id], |row| {
            Ok((
                UserGroup {
                    id: row.get(0)?,
                    name: row.get(1)?,
                    description: row.get(2)?,
                    is_system_group: flag(row.get(3)?),
                    creator_id: row.get(4)?,
                    date_created: row.get(5)?,
                    deactivated: flag(row.get(6)?),
                    settings: Map::new(),
                    members: Default::default(),
                    subgroups: Default::default(),
                },
                row.get::<_, String>(7)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut groups = BTreeMap::new();
    for (mut group, settings) in rows {
        group.settings = json_object(&settings)?;
        groups.insert(group.id, group);
    }

    let mut members = conn.prepare(
        "SELECT m.group_id, m.user_id FROM user_group_members m
         JOIN user_groups g ON g.id = m.group_id WHERE g.realm_id = ?1",
    )?;
    for pair in members.query_map([realm_id], |r| Ok((r.get::<_, GroupId>(0)?, r.get::<_, UserId>(1)?)))? {
        let (group, user) = pair?;
        if let Some(g) = groups.get_mut(&group) {
            g.members.insert(user);
        }
    }
    let mut subgroups = conn.prepare(
        "SELECT s.supergroup_id, s.subgroup_id FROM user_group_subgroups s
         JOIN user_groups g ON g.id = s.supergroup_id WHERE g.realm_id = ?1",
    )?;
    for pair in subgroups.query_map([realm_id], |r| Ok((r.get::<_, GroupId>(0)?, r.get::<_, GroupId>(1)?)))? {
        let (group, sub) = pair?;
        if let Some(g) = groups.get_mut(&group) {
            g.subgroups.insert(sub);
        }
    }
    Ok(groups)
}

/// Inserts a group (without members) and returns its id. `group.id` is ignored.
pub fn insert(conn: &Connection, realm_id: RealmId, group: &UserGroup) -> StoreResult<GroupId> {
    conn.execute(
        "INSERT INTO user_groups (realm_id, name, description, is_system_group, creator_id, date_created,
            deactivated, settings)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            realm_id,
            group.name,
            group.description,
            group.is_system_group,
            group.creator_id,
            group.date_created,
            group.deactivated,
            Value::Object(group.settings.clone()).to_string(),
        ],
    )?;
    Ok(GroupId(conn.last_insert_rowid()))
}

/// Adds direct members to a group (existing memberships are kept).
pub fn add_members(conn: &Connection, group: GroupId, users: &[UserId]) -> StoreResult<()> {
    let mut stmt =
        conn.prepare_cached("INSERT OR IGNORE INTO user_group_members (group_id, user_id) VALUES (?1, ?2)")?;
    for user in users {
        stmt.execute(params![group, user])?;
    }
    Ok(())
}

/// Removes direct members from a group.
pub fn remove_members(conn: &Connection, group: GroupId, users: &[UserId]) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached("DELETE FROM user_group_members WHERE group_id = ?1 AND user_id = ?2")?;
    for user in users {
        stmt.execute(params![group, user])?;
    }
    Ok(())
}

/// Adds direct subgroups to a group.
pub fn add_subgroups(conn: &Connection, group: GroupId, subgroups: &[GroupId]) -> StoreResult<()> {
    let mut stmt =
        conn.prepare_cached("INSERT OR IGNORE INTO user_group_subgroups (supergroup_id, subgroup_id) VALUES (?1, ?2)")?;
    for sub in subgroups {
        stmt.execute(params![group, sub])?;
    }
    Ok(())
}

/// Removes direct subgroups from a group.
pub fn remove_subgroups(conn: &Connection, group: GroupId, subgroups: &[GroupId]) -> StoreResult<()> {
    let mut stmt =
        conn.prepare_cached("DELETE FROM user_group_subgroups WHERE supergroup_id = ?1 AND subgroup_id = ?2")?;
    for sub in subgroups {
        stmt.execute(params![group, sub])?;
    }
    Ok(())
}

/// Writes a group's own columns (name, description, deactivated, settings).
pub fn update(conn: &Connection, group: &UserGroup) -> StoreResult<()> {
    conn.execute(
        "UPDATE user_groups SET name = ?2, description = ?3, deactivated = ?4, settings = ?5 WHERE id = ?1",
        params![
            group.id,
            group.name,
            group.description,
            group.deactivated,
            Value::Object(group.settings.clone()).to_string()
        ],
    )?;
    Ok(())
}
