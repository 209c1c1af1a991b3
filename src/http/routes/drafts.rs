//! What a user keeps for themselves: drafts (`/drafts`, `/drafts/{draft_id}`), navigation
//! views (`/navigation_views`, `/navigation_views/{fragment}`, the fragment possibly holding
//! slashes) and saved snippets (`/saved_snippets`, `/saved_snippets/{saved_snippet_id}`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::json_object;
use agora_actors::realm::catalog::MAX_MESSAGE_LENGTH;
use agora_actors::realm::drafts::{parse_draft, parse_drafts, CreateDrafts, DeleteDraft, EditDraft, ListDrafts};
use agora_actors::realm::navigation_views::{
    AddNavigationView, ListNavigationViews, RemoveNavigationView, UpdateNavigationView,
};
use agora_actors::realm::saved_snippets::{
    CreateSavedSnippet, DeleteSavedSnippet, EditSavedSnippet, ListSavedSnippets, MAX_TITLE_LENGTH,
};
use agora_actors::ApiError;
use serde_json::json;

use super::{path_id, Endpoint};
use crate::http::auth::Authed;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The drafts, navigation views and saved snippets endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/drafts").route(Method::GET, list_drafts).route(Method::POST, create_drafts).build())
        .service(
            Endpoint::new(r"/drafts/{draft_id:\d+}")
                .route(Method::PATCH, edit_draft)
                .route(Method::DELETE, delete_draft)
                .build(),
        )
        .service(
            Endpoint::new("/navigation_views")
                .route(Method::GET, list_navigation_views)
                .route(Method::POST, add_navigation_view)
                .build(),
        )
        .service(
            Endpoint::new("/navigation_views/{fragment:.+}")
                .route(Method::PATCH, update_navigation_view)
                .route(Method::DELETE, remove_navigation_view)
                .build(),
        )
        .service(
            Endpoint::new("/saved_snippets")
                .route(Method::GET, list_saved_snippets)
                .route(Method::POST, create_saved_snippet)
                .build(),
        )
        .service(
            Endpoint::new(r"/saved_snippets/{saved_snippet_id:\d+}")
                .route(Method::PATCH, edit_saved_snippet)
                .route(Method::DELETE, delete_saved_snippet)
                .build(),
        )
}

/// A string parameter with pydantic's `StringConstraints(strip_whitespace=True,
/// min_length=1, max_length=max)`: stripped, then not blank, then within `max` characters.
fn stripped(params: &Params, name: &str, max: Option<usize>) -> Result<Option<String>, ApiError> {
    let Some(raw) = params.str(name) else { return Ok(None) };
    let value = raw.trim();
    if value.is_empty() {
        return Err(ApiError::bad_request(format!("{name} cannot be blank")));
    }
    if let Some(max) = max.filter(|max| value.chars().count() > *max) {
        return Err(ApiError::bad_request(format!("{name} is too long (limit: {max} characters)")));
    }
    Ok(Some(value.to_owned()))
}

/// A required [`stripped`] parameter.
fn required_stripped(params: &Params, name: &str, max: Option<usize>) -> Result<String, ApiError> {
    stripped(params, name, max)?.ok_or_else(|| ApiError::missing_argument(name))
}

// --- Drafts. ---

/// `GET /drafts`: `count` and the drafts, least recently edited first.
async fn list_drafts(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let drafts = auth.realm.read(ListDrafts { user_id: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({"count": drafts.len(), "drafts": drafts}))))
}

/// `POST /drafts`: `drafts`, a JSON list; replies with their `ids`. The parameter's errors
/// go to the realm actor, which reports them only for users who synchronize drafts.
async fn create_drafts(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let drafts = params.str("drafts").ok_or_else(|| ApiError::missing_argument("drafts"));
    let msg = CreateDrafts { user_id: auth.user.user_id, drafts: drafts.and_then(|raw| parse_drafts(&raw)) };
    let ids = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "ids": ids }))))
}

/// `PATCH /drafts/{draft_id}`: `draft`, a JSON object.
async fn edit_draft(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let draft = params.str("draft").ok_or_else(|| ApiError::missing_argument("draft"));
    let msg = EditDraft {
        user_id: auth.user.user_id,
        draft_id: path_id(&path),
        draft: draft.and_then(|raw| parse_draft(&raw)),
    };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /drafts/{draft_id}`.
async fn delete_draft(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    auth.realm.addr.send(DeleteDraft { user_id: auth.user.user_id, draft_id: path_id(&path) }).await??;
    Ok(params.ok())
}

// --- Navigation views. ---

/// `GET /navigation_views`.
async fn list_navigation_views(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let views = auth.realm.addr.send(ListNavigationViews { user_id: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "navigation_views": views }))))
}

/// `POST /navigation_views`: `fragment`, `is_pinned` (JSON), `name`, checked in that order.
async fn add_navigation_view(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let fragment = required_stripped(&params, "fragment", None)?;
    let is_pinned = params.bool("is_pinned")?.ok_or_else(|| ApiError::missing_argument("is_pinned"))?;
    let name = stripped(&params, "name", None)?;
    let msg = AddNavigationView { user_id: auth.user.user_id, fragment, is_pinned, name };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `PATCH /navigation_views/{fragment}`: `is_pinned` (JSON) and `name`, both optional.
async fn update_navigation_view(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let is_pinned = params.bool("is_pinned")?;
    let name = stripped(&params, "name", None)?;
    let msg = UpdateNavigationView { user_id: auth.user.user_id, fragment: path.into_inner(), is_pinned, name };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /navigation_views/{fragment}`.
async fn remove_navigation_view(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    auth.realm.addr.send(RemoveNavigationView { user_id: auth.user.user_id, fragment: path.into_inner() }).await??;
    Ok(params.ok())
}

// --- Saved snippets. ---

/// `GET /saved_snippets`.
async fn list_saved_snippets(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let snippets = auth.realm.addr.send(ListSavedSnippets { user_id: auth.user.user_id }).await??;
    Ok(params.success(json_object(json!({ "saved_snippets": snippets }))))
}

/// `POST /saved_snippets`: `title` and `content`; replies with `saved_snippet_id`.
async fn create_saved_snippet(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let title = required_stripped(&params, "title", Some(MAX_TITLE_LENGTH))?;
    let content = required_stripped(&params, "content", Some(MAX_MESSAGE_LENGTH))?;
    let id = auth.realm.addr.send(CreateSavedSnippet { user_id: auth.user.user_id, title, content }).await??;
    Ok(params.success(json_object(json!({ "saved_snippet_id": id }))))
}

/// `PATCH /saved_snippets/{saved_snippet_id}`: `title` and `content`, both optional.
async fn edit_saved_snippet(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let title = stripped(&params, "title", Some(MAX_TITLE_LENGTH))?;
    let content = stripped(&params, "content", Some(MAX_MESSAGE_LENGTH))?;
    let msg = EditSavedSnippet { user_id: auth.user.user_id, saved_snippet_id: path_id(&path), title, content };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}

/// `DELETE /saved_snippets/{saved_snippet_id}`.
async fn delete_saved_snippet(auth: Authed, path: web::Path<String>, params: Params) -> Result<Success, HttpError> {
    let msg = DeleteSavedSnippet { user_id: auth.user.user_id, saved_snippet_id: path_id(&path) };
    auth.realm.addr.send(msg).await??;
    Ok(params.ok())
}
