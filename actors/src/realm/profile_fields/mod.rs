//! Custom profile fields (spec 2.12, 4.11) and users' values of them: the messages and the
//! realm actor's handlers. Changes are planned in `ops`, shapes made in `format`, values
//! checked in `validate`.
//!
//! Field changes send `custom_profile_fields` (the whole list) to every active user; value
//! changes send `realm_user`/`update` with `custom_profile_field` to every active user.

pub mod format;
pub mod ops;
mod validate;

use actix::prelude::*;
use serde_json::Value;

pub use self::format::{field_dict, field_dicts};
pub use self::ops::{
    create_field, validate_profile_data, validate_profile_removal, FieldChanges, NewField, ProfileDataChange,
    ProfileDataWrites, MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS,
};
pub use self::validate::field_type;
use super::actor::RealmActor;
use crate::error::ApiResult;
use crate::ids::{FieldId, UserId};

/// `GET /realm/profile_fields`: every field, in `order`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Vec<Value>>")]
pub struct ListProfileFields {
    pub viewer: UserId,
}

/// `POST /realm/profile_fields`; the new field's id.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<FieldId>")]
pub struct CreateProfileField {
    pub acting: UserId,
    pub field: NewField,
}

/// `PATCH /realm/profile_fields/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateProfileField {
    pub acting: UserId,
    pub field_id: i64,
    pub changes: FieldChanges,
}

/// `DELETE /realm/profile_fields/{id}`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct DeleteProfileField {
    pub acting: UserId,
    pub field_id: i64,
}

/// `PATCH /realm/profile_fields`: the new order of every field.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct ReorderProfileFields {
    pub acting: UserId,
    pub order: Vec<i64>,
}

/// `PATCH /users/me/profile_data`: the requester's own values.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct UpdateOwnProfileData {
    pub user_id: UserId,
    /// The `data` list as given.
    pub data: Vec<Value>,
}

/// `DELETE /users/me/profile_data`: removes the requester's values of these fields.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<()>")]
pub struct RemoveOwnProfileData {
    pub user_id: UserId,
    pub field_ids: Vec<i64>,
}

impl Handler<ListProfileFields> for RealmActor {
    type Result = ApiResult<Vec<Value>>;

    fn handle(&mut self, msg: ListProfileFields, _: &mut Self::Context) -> Self::Result {
        self.viewer(msg.viewer)?;
        Ok(field_dicts(&self.state))
    }
}

impl Handler<CreateProfileField> for RealmActor {
    type Result = ApiResult<FieldId>;

    fn handle(&mut self, msg: CreateProfileField, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_create(&self.state, msg.acting, msg.field)?;
        self.commit(change)
    }
}

impl Handler<UpdateProfileField> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateProfileField, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_update(&self.state, msg.acting, msg.field_id, msg.changes)?;
        self.commit(change)
    }
}

impl Handler<DeleteProfileField> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: DeleteProfileField, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_delete(&self.state, msg.acting, msg.field_id)?;
        self.commit(change)
    }
}

impl Handler<ReorderProfileFields> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: ReorderProfileFields, _: &mut Self::Context) -> Self::Result {
        let change = ops::plan_reorder(&self.state, msg.acting, &msg.order)?;
        self.commit(change)
    }
}

impl Handler<UpdateOwnProfileData> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: UpdateOwnProfileData, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        let change = ops::plan_own_values(&self.state, user, &msg.data)?;
        self.commit(change)
    }
}

impl Handler<RemoveOwnProfileData> for RealmActor {
    type Result = ApiResult<()>;

    fn handle(&mut self, msg: RemoveOwnProfileData, _: &mut Self::Context) -> Self::Result {
        let user = self.viewer(msg.user_id)?;
        let change = ops::plan_own_removal(&self.state, user, &msg.field_ids)?;
        self.commit(change)
    }
}

#[cfg(test)]
mod tests;
