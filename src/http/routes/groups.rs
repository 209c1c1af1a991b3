//! User groups (`/user_groups...`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::ids::{GroupId, UserId};
use agora_actors::json_object;
use agora_actors::realm::catalog;
use agora_actors::realm::groups::{
    ChangeGroupMembership, CreateUserGroup, DeactivateUserGroup, GetGroupMembers, GetSubgroups, GroupUpdate,
    IsGroupMember, ListUserGroups, MembershipChange, MembershipEndpoint, NewGroup, UpdateUserGroup,
};
use agora_actors::ApiError;
use serde_json::{json, Value};

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The user group endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/user_groups").route(Method::GET, list_groups).build())
        .service(Endpoint::new("/user_groups/create").route(Method::POST, create_group).build())
        .service(Endpoint::new("/user_groups/{group:\\d+}").route(Method::PATCH, update_group).build())
        .service(
            Endpoint::new("/user_groups/{group:\\d+}/members")
                .route(Method::GET, get_members)
                .route(Method::POST, update_members)
                .build(),
        )
        .service(Endpoint::new("/user_groups/{group:\\d+}/members/{user:\\d+}").route(Method::GET, is_member).build())
        .service(
            Endpoint::new("/user_groups/{group:\\d+}/subgroups")
                .route(Method::GET, get_subgroups)
                .route(Method::POST, update_subgroups)
                .build(),
        )
        .service(Endpoint::new("/user_groups/{group:\\d+}/deactivate").route(Method::POST, deactivate_group).build())
}

/// The `can_*_group` parameters given, as raw JSON values.
fn group_settings(params: &Params) -> Result<Vec<(String, Value)>, ApiError> {
    let mut given = Vec::new();
    for permission in catalog::USER_GROUP_PERMISSION_SETTINGS {
        if let Some(value) = params.decode(permission.name, decode::json)? {
            given.push((permission.name.to_owned(), value));
        }
    }
    Ok(given)
}

/// An optional JSON list of integers; absent is empty.
fn id_list(params: &Params, name: &str) -> Result<Vec<i64>, ApiError> {
    Ok(params.decode(name, decode::integer_list)?.unwrap_or_default())
}

/// `POST /user_groups/create`.
async fn create_group(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let settings = group_settings(&params)?;
    let description = params.required_str("description")?;
    let members =
        params.decode("members", decode::integer_list)?.ok_or_else(|| ApiError::missing_argument("members"))?;
    let name = params.required_str("name")?;
    let subgroups = params.decode("subgroups", decode::integer_list)?;
    let group = NewGroup { name, description, members, subgroups, settings };
    let id = auth.realm.addr.send(CreateUserGroup { acting: auth.user.user_id, group }).await??;
    Ok(params.success(json_object(json!({ "group_id": id }))))
}

/// `GET /user_groups`.
async fn list_groups(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let include_deactivated = params.bool_or("include_deactivated_groups", false)?;
    let groups = auth.realm.addr.send(ListUserGroups { viewer: auth.user.user_id, include_deactivated }).await??;
    Ok(params.success(json_object(json!({ "user_groups": groups }))))
}

/// `PATCH /user_groups/{id}`.
async fn update_group(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let update = GroupUpdate {
        settings: group_settings(&params)?,
        deactivated: params.bool("deactivated")?,
        description: params.str("description"),
        name: params.str("name"),
    };
    let group_id = GroupId(path_id(&path));
    auth.realm.addr.send(UpdateUserGroup { acting: auth.user.user_id, group_id, update }).await??;
    Ok(params.ok())
}

/// Sends a membership change of either endpoint.
async fn change_membership(
    auth: &Authed,
    group: &str,
    change: MembershipChange,
    endpoint: MembershipEndpoint,
) -> Result<(), HttpError> {
    let msg = ChangeGroupMembership { acting: auth.user.user_id, group_id: GroupId(path_id(group)), change, endpoint };
    auth.realm.addr.send(msg).await??;
    Ok(())
}

/// `POST /user_groups/{id}/members`.
async fn update_members(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let change = MembershipChange {
        add: id_list(&params, "add")?,
        add_subgroups: id_list(&params, "add_subgroups")?,
        delete: id_list(&params, "delete")?,
        delete_subgroups: id_list(&params, "delete_subgroups")?,
    };
    change_membership(&auth, &path, change, MembershipEndpoint::Members).await?;
    Ok(params.ok())
}

/// `POST /user_groups/{id}/subgroups`.
async fn update_subgroups(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let change = MembershipChange {
        add_subgroups: id_list(&params, "add")?,
        delete_subgroups: id_list(&params, "delete")?,
        ..MembershipChange::default()
    };
    change_membership(&auth, &path, change, MembershipEndpoint::Subgroups).await?;
    Ok(params.ok())
}

/// `GET /user_groups/{id}/members`.
async fn get_members(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let direct_only = params.bool_or("direct_member_only", false)?;
    let msg = GetGroupMembers { viewer: auth.user.user_id, group_id: GroupId(path_id(&path)), direct_only };
    let members = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "members": members }))))
}

/// `GET /user_groups/{id}/members/{user_id}`.
async fn is_member(auth: Authed, path: web::Path<(String, String)>, params: Params) -> Result<Success, HttpError> {
    let direct_only = params.bool_or("direct_member_only", false)?;
    let (group, user) = path.into_inner();
    let msg = IsGroupMember {
        viewer: auth.user.user_id,
        group_id: GroupId(path_id(&group)),
        user_id: UserId(path_id(&user)),
        direct_only,
    };
    let is_member = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "is_user_group_member": is_member }))))
}

/// `GET /user_groups/{id}/subgroups`.
async fn get_subgroups(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let direct_only = params.bool_or("direct_subgroup_only", false)?;
    let msg = GetSubgroups { viewer: auth.user.user_id, group_id: GroupId(path_id(&path)), direct_only };
    let subgroups = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "subgroups": subgroups }))))
}

/// `POST /user_groups/{id}/deactivate`.
async fn deactivate_group(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let group_id = GroupId(path_id(&path));
    auth.realm.addr.send(DeactivateUserGroup { acting: auth.user.user_id, group_id }).await??;
    Ok(params.ok())
}
