//! Video calls (`/calls/bigbluebutton/create`): the links of a BigBlueButton call, as a
//! Zulip server makes them. Agora has no BigBlueButton server: the link leads to
//! `/calls/bigbluebutton/join` (`http::pages::calls`), which says so, as Zulip's does when
//! none is configured. Constructor Groups (FL 460) and Nextcloud Talk (FL 465) answer as a
//! Zulip server without them configured. Zoom's, Webex's and the other providers' routes
//! are not served.

use actix_web::http::Method;
use actix_web::Scope;
use agora_actors::ids::UserId;
use agora_actors::{json_object, ApiError};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::Rng;
use serde_json::json;

use super::Endpoint;
use crate::http::auth::Authed;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

/// The video call endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope
        .service(Endpoint::new("/calls/bigbluebutton/create").route(Method::GET, create_bigbluebutton_call).build())
        .service(
            Endpoint::new("/calls/constructorgroups/create")
                .route(Method::POST, create_constructor_groups_call)
                .build(),
        )
        .service(Endpoint::new("/calls/nextcloud_talk/create").route(Method::POST, create_nextcloud_talk_call).build())
}

/// The join link of a new call (Zulip's `get_bigbluebutton_url`): a random meeting id
/// (`zulip-` and twelve digits), the name, whether cameras are off, and the caller as its
/// moderator, in one opaque parameter. Zulip signs it for its join page to check; Agora's
/// join page serves no call, so there is nothing to sign it for.
fn join_url(meeting_name: &str, voice_only: bool, moderator: UserId) -> String {
    let meeting_id = format!("zulip-{}", rand::thread_rng().gen_range(100_000_000_000_i64..=999_999_999_999));
    let data = json!({
        "meeting_id": meeting_id,
        "name": meeting_name,
        "lock_settings_disable_cam": voice_only,
        "moderator": moderator,
    });
    format!("/calls/bigbluebutton/join?bigbluebutton={}", URL_SAFE_NO_PAD.encode(data.to_string()))
}

/// `GET /calls/bigbluebutton/create`: `meeting_name` and `voice_only` (a JSON boolean,
/// false by default); replies with the call's `url`.
async fn create_bigbluebutton_call(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let meeting_name = params.required_str("meeting_name")?;
    let voice_only = params.bool_or("voice_only", false)?;
    let url = join_url(&meeting_name, voice_only, auth.user.user_id);
    Ok(params.success(json_object(json!({ "url": url }))))
}

/// `POST /calls/constructorgroups/create` (FL 460): `is_video_call` (a JSON boolean,
/// optional), then Zulip's answer when no Constructor Groups server is configured.
async fn create_constructor_groups_call(_auth: Authed, params: Params) -> Result<Success, HttpError> {
    params.bool_or("is_video_call", true)?;
    Err(ApiError::bad_request("Constructor Groups is not configured.").into())
}

/// `POST /calls/nextcloud_talk/create` (FL 465): `room_name`, then Zulip's answer when no
/// Nextcloud server is configured.
async fn create_nextcloud_talk_call(_auth: Authed, params: Params) -> Result<Success, HttpError> {
    params.required_str("room_name")?;
    Err(ApiError::bad_request("Nextcloud Talk is not configured.").into())
}
