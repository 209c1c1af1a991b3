//! User groups (spec 2.1, 2.13, 4.17, 4.18): their messages and the realm actor's
//! handlers. Changes are planned in `ops`, queries answered in `reads`, events shaped in
//! `format`.

pub mod format;
pub mod ops;
pub mod reads;

use actix::prelude::*;
use serde_json::Value;

pub use crate::realm::group_setting::{GroupSettingChange, GroupSettingValue};
pub use ops::{GroupUpdate, MembershipChange, MembershipEndpoint, NewGroup};

use super::actor::RealmActor;
use crate::clock;
use crate::error::ApiResult;
use crate::ids::{GroupId, UserId};

/// `POST /user_groups/create`; replies with the new group's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<GroupId>")]
pub struct CreateUserGroup {
    pub acting: UserId,
    pub group: NewGroup,
}

/// `GET /user_groups`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListUserGroups {
    pub viewer: UserId,
    pub include_deactivated: bool,
}

/// `PATCH /user_groups/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateUserGroup {
    pub acting: UserId,
    pub group_id: GroupId,
    pub update: GroupUpdate,
}

/// `POST /user_groups/{id}/members` and `POST /user_groups/{id}/subgroups`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ChangeGroupMembership {
    pub acting: UserId,
    pub group_id: GroupId,
    pub change: MembershipChange,
    pub endpoint: MembershipEndpoint,
}

/// `POST /user_groups/{id}/deactivate`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeactivateUserGroup {
    pub acting: UserId,
    pub group_id: GroupId,
}

/// `GET /user_groups/{id}/members`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<UserId>>")]
pub struct GetGroupMembers {
    pub viewer: UserId,
    pub group_id: GroupId,
    pub direct_only: bool,
}

/// `GET /user_groups/{id}/members/{user_id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<bool>")]
pub struct IsGroupMember {
    pub viewer: UserId,
    pub group_id: GroupId,
    pub user_id: UserId,
    pub direct_only: bool,
}

/// `GET /user_groups/{id}/subgroups`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<GroupId>>")]
pub struct GetSubgroups {
    pub viewer: UserId,
    pub group_id: GroupId,
    pub direct_only: bool,
}

impl Handler<CreateUserGroup> for RealmActor {
    type Result = ApiResult<GroupId>;

    fn handle(&mut self, msg: CreateUserGroup, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_create(&self.state, msg.acting, msg.group, clock::now())?;
        self.commit(change)
    }
}

impl Handler<ListUserGroups> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListUserGroups, _: &mut Self::Context) -> Self::Result {
        reads::list_groups(&self.state, msg.viewer, msg.include_deactivated)
    }
}

impl Handler<UpdateUserGroup> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateUserGroup, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_update(&self.state, msg.acting, msg.group_id, msg.update)?;
        self.commit(change)
    }
}

impl Handler<ChangeGroupMembership> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ChangeGroupMembership, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_membership(&self.state, msg.acting, msg.group_id, msg.change, msg.endpoint)?;
        self.commit(change)
    }
}

impl Handler<DeactivateUserGroup> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeactivateUserGroup, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_deactivate(&self.state, msg.acting, msg.group_id)?;
        self.commit(change)
    }
}

impl Handler<GetGroupMembers> for RealmActor {
    type Result = ApiResult<Vec<UserId>>;

    fn handle(&mut self, msg: GetGroupMembers, _: &mut Self::Context) -> Self::Result {
        reads::group_members(&self.state, msg.viewer, msg.group_id, msg.direct_only)
    }
}

impl Handler<IsGroupMember> for RealmActor {
    type Result = ApiResult<bool>;

    fn handle(&mut self, msg: IsGroupMember, _: &mut Self::Context) -> Self::Result {
        reads::is_group_member(&self.state, msg.viewer, msg.group_id, msg.user_id, msg.direct_only)
    }
}

impl Handler<GetSubgroups> for RealmActor {
    type Result = ApiResult<Vec<GroupId>>;

    fn handle(&mut self, msg: GetSubgroups, _: &mut Self::Context) -> Self::Result {
        reads::subgroups_of(&self.state, msg.viewer, msg.group_id, msg.direct_only)
    }
}

#[cfg(test)]
mod tests;
