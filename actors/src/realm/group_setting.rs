//! The group-setting value (spec 2.1): who a permission setting names.
//!
//! A value is either a user group's id or an anonymous group given by its direct members
//! and direct subgroups. This module parses the API forms (the plain value and the
//! `{"new": .., "old": ..}` change form of `PATCH` endpoints), validates a value against a
//! setting's [`GroupRule`] with Zulip's messages, normalises it as Zulip does, and resolves
//! it to the users it contains. Realm, channel and user-group settings all use it.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{GroupId, UserId};
use crate::realm::catalog::GroupRule;
use crate::realm::model::{Role, SystemGroup, UserGroup};
use crate::realm::state::RealmState;

/// A group-setting value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupSettingValue {
    /// A named user group (system groups included).
    Group(GroupId),
    /// An anonymous group: these users and these groups' members.
    Anonymous { direct_members: BTreeSet<UserId>, direct_subgroups: BTreeSet<GroupId> },
}

/// A `PATCH` request's change of a group setting: the new value and, optionally, the value
/// the client believes is current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSettingChange {
    pub new: GroupSettingValue,
    pub old: Option<GroupSettingValue>,
}

/// The error for a value of the wrong shape.
fn invalid(name: &str) -> ApiError {
    ApiError::bad_request(format!("Invalid {name}"))
}

/// A JSON list of integers.
fn id_list(value: Option<&Value>) -> Option<Vec<i64>> {
    value?.as_array()?.iter().map(Value::as_i64).collect()
}

impl GroupSettingValue {
    /// Parses the API form of the setting `name`: an integer, or an object with exactly the
    /// lists `direct_members` and `direct_subgroups`.
    pub fn from_api(name: &str, value: &Value) -> ApiResult<Self> {
        Self::from_json(value).ok_or_else(|| invalid(name))
    }

    /// Parses a stored or API value; `None` for anything else.
    pub fn from_json(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) => n.as_i64().map(|id| Self::Group(GroupId(id))),
            Value::Object(o) if o.len() == 2 => {
                let members = id_list(o.get("direct_members"))?;
                let subgroups = id_list(o.get("direct_subgroups"))?;
                Some(Self::Anonymous {
                    direct_members: members.into_iter().map(UserId).collect(),
                    direct_subgroups: subgroups.into_iter().map(GroupId).collect(),
                })
            }
            _ => None,
        }
    }

    /// The stored form (also the API form, before hiding deactivated users).
    pub fn to_json(&self) -> Value {
        match self {
            Self::Group(id) => json!(id),
            Self::Anonymous { direct_members, direct_subgroups } => {
                json!({"direct_members": direct_members, "direct_subgroups": direct_subgroups})
            }
        }
    }

    /// Zulip's `parse_group_setting_value`: an anonymous group of one subgroup and no
    /// members is that subgroup; an empty one is `role:nobody`.
    pub fn normalized(self, nobody: GroupId) -> Self {
        match self {
            Self::Anonymous { direct_members, direct_subgroups } if direct_members.is_empty() => {
                match direct_subgroups.len() {
                    0 => Self::Group(nobody),
                    1 => Self::Group(direct_subgroups.into_iter().next().unwrap_or(nobody)),
                    _ => Self::Anonymous { direct_members, direct_subgroups },
                }
            }
            other => other,
        }
    }

    /// Whether the value names this group, directly or as a direct subgroup of the
    /// anonymous group (what makes a group "in use" by a setting).
    pub fn uses_group(&self, group: GroupId) -> bool {
        match self {
            Self::Group(id) => *id == group,
            Self::Anonymous { direct_subgroups, .. } => direct_subgroups.contains(&group),
        }
    }
}

impl GroupSettingChange {
    /// Parses `{"new": value, "old": value?}`.
    pub fn from_api(name: &str, value: &Value) -> ApiResult<Self> {
        let obj =
            value.as_object().filter(|o| o.keys().all(|k| k == "new" || k == "old")).ok_or_else(|| invalid(name))?;
        let new = GroupSettingValue::from_api(name, obj.get("new").ok_or_else(|| invalid(name))?)?;
        let old = obj.get("old").map(|v| GroupSettingValue::from_api(name, v)).transpose()?;
        Ok(GroupSettingChange { new, old })
    }

    /// Zulip's `validate_group_setting_value_change`: refuses the change when `old` is
    /// given and differs from `current`; otherwise whether `new` differs from it. Both
    /// values are normalised first.
    pub fn is_change_from(&self, current: &GroupSettingValue, nobody: GroupId) -> ApiResult<bool> {
        if let Some(old) = &self.old {
            if old.clone().normalized(nobody) != *current {
                return Err(ApiError::new(
                    ErrorCode::ExpectationMismatch,
                    400,
                    "'old' value does not match the expected value.",
                ));
            }
        }
        Ok(self.new.clone().normalized(nobody) != *current)
    }
}

/// The message refusing `group_name` for the setting `setting`.
fn refused(setting: &str, group_name: &str) -> ApiError {
    ApiError::bad_request(format!("'{setting}' setting cannot be set to '{group_name}' group."))
}

impl RealmState {
    /// The system groups a user of `role` is a direct member of: the role's own group, and
    /// `role:fullmembers` for members past the organization's waiting period.
    pub fn role_groups(&self, role: Role, date_joined: i64, now: i64) -> Vec<GroupId> {
        let mut names = vec![role.system_group()];
        let waited_days = (now - date_joined).div_euclid(86_400);
        if role == Role::Member && waited_days >= self.realm().waiting_period_threshold() {
            names.push(SystemGroup::FULL_MEMBERS);
        }
        names.into_iter().filter_map(|n| self.system_group_id(n)).collect()
    }

    /// Whether `user` belongs to `group`, directly or through subgroups.
    pub fn is_member_recursive(&self, group: GroupId, user: UserId) -> bool {
        let mut stack = vec![group];
        let mut seen = Vec::new();
        while let Some(g) = stack.pop() {
            if seen.contains(&g) {
                continue;
            }
            seen.push(g);
            if let Some(grp) = self.group(g) {
                if grp.members.contains(&user) {
                    return true;
                }
                stack.extend(grp.subgroups.iter().copied());
            }
        }
        false
    }

    /// Whether `user` is in a group-setting value (spec 2.1): a group id, or an anonymous
    /// group `{"direct_members": [...], "direct_subgroups": [...]}`.
    pub fn group_setting_contains(&self, value: &serde_json::Value, user: UserId) -> bool {
        if let Some(id) = value.as_i64() {
            return self.is_member_recursive(GroupId(id), user);
        }
        let ids = |key: &str| -> Vec<i64> {
            value
                .get(key)
                .and_then(|v| v.as_array())
                .map(|a| a.iter().filter_map(|v| v.as_i64()).collect())
                .unwrap_or_default()
        };
        ids("direct_members").contains(&user.0)
            || ids("direct_subgroups").into_iter().any(|g| self.is_member_recursive(GroupId(g), user))
    }

    /// The id of `role:nobody` (every realm has one; `GroupId(0)` names no group).
    pub fn nobody_group_id(&self) -> GroupId {
        self.system_group_id(SystemGroup::NOBODY).unwrap_or(GroupId(0))
    }

    /// The stored value of a group's own permission setting; `role:nobody` when unset
    /// (system groups).
    pub fn group_setting_of(&self, group: &UserGroup, name: &str) -> GroupSettingValue {
        group
            .settings
            .get(name)
            .and_then(GroupSettingValue::from_json)
            .unwrap_or(GroupSettingValue::Group(self.nobody_group_id()))
    }

    /// A group usable in a setting or as a subgroup: it exists ("Invalid user group", or
    /// `unknown` for the caller's own message) and is active.
    pub fn active_group(&self, id: GroupId, unknown: impl FnOnce() -> ApiError) -> ApiResult<&UserGroup> {
        let group = self.group(id).ok_or_else(unknown)?;
        if group.deactivated {
            return Err(ApiError::bad_request("User group is deactivated."));
        }
        Ok(group)
    }

    /// Active users by id, or "Invalid user ID: N" for the first unknown or deactivated one
    /// (Zulip's `user_ids_to_users` without deactivated users).
    pub fn active_users_by_ids(&self, ids: &[i64]) -> ApiResult<BTreeSet<UserId>> {
        ids.iter()
            .map(|&id| match self.user(UserId(id)) {
                Some(u) if u.is_active => Ok(u.id),
                _ => Err(ApiError::bad_request(format!("Invalid user ID: {id}"))),
            })
            .collect()
    }

    /// Normalises and validates a value for the setting `setting` with rule `rule`
    /// (Zulip's `parse_group_setting_value` then `access_user_group_for_setting`), and
    /// returns the value to store.
    pub fn check_group_setting(
        &self,
        setting: &str,
        rule: &GroupRule,
        value: GroupSettingValue,
    ) -> ApiResult<GroupSettingValue> {
        match value.normalized(self.nobody_group_id()) {
            GroupSettingValue::Group(id) => {
                let group = self.active_group(id, || ApiError::bad_request("Invalid user group"))?;
                check_rule(setting, rule, group)?;
                Ok(GroupSettingValue::Group(id))
            }
            GroupSettingValue::Anonymous { direct_members, direct_subgroups } => {
                if rule.require_system_group {
                    return Err(ApiError::bad_request(format!("'{setting}' must be a system user group.")));
                }
                let ids: Vec<i64> = direct_members.iter().map(|u| u.0).collect();
                self.active_users_by_ids(&ids)?;
                for &sub in &direct_subgroups {
                    self.active_group(sub, || ApiError::bad_request(format!("Invalid user group ID: {}", sub.0)))?;
                }
                Ok(GroupSettingValue::Anonymous { direct_members, direct_subgroups })
            }
        }
    }

    /// A stored value as the API shows it: anonymous groups list active members only.
    pub fn group_setting_api_value(&self, value: &GroupSettingValue) -> GroupSettingValue {
        match value {
            GroupSettingValue::Group(id) => GroupSettingValue::Group(*id),
            GroupSettingValue::Anonymous { direct_members, direct_subgroups } => GroupSettingValue::Anonymous {
                direct_members: direct_members.iter().copied().filter(|u| self.is_active_user(*u)).collect(),
                direct_subgroups: direct_subgroups.clone(),
            },
        }
    }

    /// Every group reachable from `roots` through subgroups, the roots included.
    pub fn recursive_subgroups(&self, roots: impl IntoIterator<Item = GroupId>) -> BTreeSet<GroupId> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<GroupId> = roots.into_iter().collect();
        while let Some(id) = stack.pop() {
            if self.group(id).is_some() && seen.insert(id) {
                stack.extend(self.group(id).into_iter().flat_map(|g| g.subgroups.iter().copied()));
            }
        }
        seen
    }

    /// The active users in these groups, directly or through subgroups.
    pub fn recursive_members(&self, roots: impl IntoIterator<Item = GroupId>) -> BTreeSet<UserId> {
        self.recursive_subgroups(roots)
            .into_iter()
            .filter_map(|id| self.group(id))
            .flat_map(|g| g.members.iter().copied())
            .filter(|u| self.is_active_user(*u))
            .collect()
    }

    /// The active users a value contains (recursively through subgroups).
    pub fn group_setting_members(&self, value: &GroupSettingValue) -> BTreeSet<UserId> {
        match value {
            GroupSettingValue::Group(id) => self.recursive_members([*id]),
            GroupSettingValue::Anonymous { direct_members, direct_subgroups } => {
                let mut users = self.recursive_members(direct_subgroups.iter().copied());
                users.extend(direct_members.iter().copied().filter(|u| self.is_active_user(*u)));
                users
            }
        }
    }

    /// Whether an active `user` is in the value, without building the member set.
    pub fn group_setting_has(&self, value: &GroupSettingValue, user: UserId) -> bool {
        if !self.is_active_user(user) {
            return false;
        }
        match value {
            GroupSettingValue::Group(id) => self.is_member_recursive(*id, user),
            GroupSettingValue::Anonymous { direct_members, direct_subgroups } => {
                direct_members.contains(&user) || direct_subgroups.iter().any(|g| self.is_member_recursive(*g, user))
            }
        }
    }

    /// Whether `user` holds a permission given by `value` (Zulip's
    /// `user_has_permission_for_group_setting`): guests never hold one whose rule refuses
    /// `role:everyone`.
    pub fn has_group_permission(&self, value: &GroupSettingValue, rule: &GroupRule, user: UserId) -> bool {
        if !rule.allow_everyone_group && self.user(user).is_some_and(|u| u.role == Role::Guest) {
            return false;
        }
        self.group_setting_has(value, user)
    }
}

/// Zulip's `check_setting_configuration_for_system_groups`.
fn check_rule(setting: &str, rule: &GroupRule, group: &UserGroup) -> ApiResult<()> {
    if rule.require_system_group && !group.is_system_group {
        return Err(ApiError::bad_request(format!("'{setting}' must be a system user group.")));
    }
    let name = group.name.as_str();
    let refused_by_flag = (name == SystemGroup::INTERNET && !rule.allow_internet_group)
        || (name == SystemGroup::NOBODY && !rule.allow_nobody_group)
        || (name == SystemGroup::EVERYONE && !rule.allow_everyone_group);
    let outside_allowed = !rule.allowed_system_groups.is_empty() && !rule.allowed_system_groups.contains(&name);
    if refused_by_flag || outside_allowed {
        return Err(refused(setting, name));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
