use serde_json::json;

use super::*;
use crate::realm::catalog::{self, Kind};
use crate::realm::tests::{add, setup};

struct Fixture {
    _dir: tempfile::TempDir,
    state: RealmState,
    owner: UserId,
    member: UserId,
    guest: UserId,
}

fn fixture() -> Fixture {
    let (dir, store, config, mut state) = setup();
    let owner = state.users().next().unwrap().id;
    let member = add(&mut state, &store, &config, "m@acme.test", Role::Member);
    let guest = add(&mut state, &store, &config, "g@acme.test", Role::Guest);
    Fixture { _dir: dir, owner, state, member, guest }
}

fn sys(state: &RealmState, name: &str) -> GroupId {
    state.system_group_id(name).unwrap()
}

fn anon(members: &[i64], subgroups: &[i64]) -> GroupSettingValue {
    GroupSettingValue::Anonymous {
        direct_members: members.iter().map(|&u| UserId(u)).collect(),
        direct_subgroups: subgroups.iter().map(|&g| GroupId(g)).collect(),
    }
}

fn group_rule(name: &str) -> GroupRule {
    catalog::USER_GROUP_PERMISSION_SETTINGS.iter().find(|p| p.name == name).unwrap().rule
}

#[test]
fn api_values_parse_and_print() {
    assert_eq!(GroupSettingValue::from_api("x", &json!(7)).unwrap(), GroupSettingValue::Group(GroupId(7)));
    let v = GroupSettingValue::from_api("x", &json!({"direct_members": [3, 1], "direct_subgroups": [2]})).unwrap();
    assert_eq!(v, anon(&[1, 3], &[2]));
    assert_eq!(v.to_json(), json!({"direct_members": [1, 3], "direct_subgroups": [2]}));
    for bad in [
        json!("7"),
        json!(true),
        json!({"direct_members": []}),
        json!({"direct_members": ["a"], "direct_subgroups": []}),
    ] {
        assert_eq!(GroupSettingValue::from_api("can_x", &bad).unwrap_err().msg, "Invalid can_x");
    }
}

#[test]
fn normalisation_follows_zulip() {
    let nobody = GroupId(99);
    assert_eq!(anon(&[], &[4]).normalized(nobody), GroupSettingValue::Group(GroupId(4)));
    assert_eq!(anon(&[], &[]).normalized(nobody), GroupSettingValue::Group(nobody));
    assert_eq!(anon(&[1], &[]).normalized(nobody), anon(&[1], &[]));
    assert_eq!(anon(&[], &[4, 5]).normalized(nobody), anon(&[], &[4, 5]));
}

#[test]
fn rules_refuse_system_groups_with_zulips_messages() {
    let f = fixture();
    let s = &f.state;
    let manage = group_rule("can_manage_group");
    let internet = GroupSettingValue::Group(sys(s, SystemGroup::INTERNET));
    let everyone = GroupSettingValue::Group(sys(s, SystemGroup::EVERYONE));
    let err = |v: GroupSettingValue| s.check_group_setting("can_manage_group", &manage, v).unwrap_err().msg;
    assert_eq!(err(internet), "'can_manage_group' setting cannot be set to 'role:internet' group.");
    assert_eq!(err(everyone.clone()), "'can_manage_group' setting cannot be set to 'role:everyone' group.");
    // The normalised form is checked: one subgroup and no members is that subgroup.
    let wrapped = anon(&[], &[sys(s, SystemGroup::EVERYONE).0]);
    assert_eq!(err(wrapped), "'can_manage_group' setting cannot be set to 'role:everyone' group.");
    assert_eq!(err(GroupSettingValue::Group(GroupId(4242))), "Invalid user group");
    assert_eq!(err(anon(&[4242], &[])), "Invalid user ID: 4242");
    assert_eq!(err(anon(&[f.owner.0], &[4242])), "Invalid user group ID: 4242");
    let mention = group_rule("can_mention_group");
    assert_eq!(s.check_group_setting("can_mention_group", &mention, everyone.clone()).unwrap(), everyone);
    assert_eq!(
        s.check_group_setting("can_mention_group", &mention, anon(&[], &[])).unwrap(),
        GroupSettingValue::Group(s.nobody_group_id())
    );
}

#[test]
fn realm_rules_with_allowed_system_groups() {
    let f = fixture();
    let s = &f.state;
    let (name, rule) = catalog::REALM_SETTINGS
        .iter()
        .find_map(|st| match st.kind {
            Kind::Group(rule) if rule.require_system_group && !rule.allowed_system_groups.is_empty() => {
                Some((st.name, rule))
            }
            _ => None,
        })
        .unwrap();
    let admins = GroupSettingValue::Group(sys(s, SystemGroup::ADMINISTRATORS));
    assert!(!rule.allowed_system_groups.contains(&SystemGroup::ADMINISTRATORS));
    let msg = s.check_group_setting(name, &rule, admins).unwrap_err().msg;
    assert_eq!(msg, format!("'{name}' setting cannot be set to 'role:administrators' group."));
    let msg = s.check_group_setting(name, &rule, anon(&[f.owner.0], &[])).unwrap_err().msg;
    assert_eq!(msg, format!("'{name}' must be a system user group."));
}

#[test]
fn values_resolve_recursively_to_active_users() {
    let f = fixture();
    let s = &f.state;
    let members = GroupSettingValue::Group(sys(s, SystemGroup::MEMBERS));
    let got = s.group_setting_members(&members);
    assert_eq!(got, [f.owner, f.member].into_iter().collect());
    assert!(s.group_setting_has(&members, f.owner) && !s.group_setting_has(&members, f.guest));
    let mixed = anon(&[f.guest.0], &[sys(s, SystemGroup::OWNERS).0]);
    assert_eq!(s.group_setting_members(&mixed), [f.owner, f.guest].into_iter().collect());
    assert!(s.group_setting_has(&mixed, f.guest) && !s.group_setting_has(&mixed, f.member));
    // Guests never hold a permission whose rule refuses role:everyone.
    assert!(!s.has_group_permission(&mixed, &group_rule("can_manage_group"), f.guest));
    assert!(s.has_group_permission(&mixed, &group_rule("can_mention_group"), f.guest));
}

#[test]
fn changes_check_the_old_value() {
    let nobody = GroupId(9);
    let current = anon(&[1, 2], &[]);
    let change = |v: serde_json::Value| GroupSettingChange::from_api("can_x", &v).unwrap();
    assert!(change(json!({"new": 5})).is_change_from(&current, nobody).unwrap());
    assert!(!change(json!({"new": {"direct_members": [2, 1], "direct_subgroups": []}}))
        .is_change_from(&current, nobody)
        .unwrap());
    let ok = change(json!({"new": 5, "old": {"direct_members": [2, 1], "direct_subgroups": []}}));
    assert!(ok.is_change_from(&current, nobody).unwrap());
    let err = change(json!({"new": 5, "old": 7})).is_change_from(&current, nobody).unwrap_err();
    assert_eq!(err.msg, "'old' value does not match the expected value.");
    assert_eq!(err.code, Some(ErrorCode::ExpectationMismatch));
    assert_eq!(GroupSettingChange::from_api("can_x", &json!(5)).unwrap_err().msg, "Invalid can_x");
}
