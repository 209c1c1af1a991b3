//! Video calls (`/calls/bigbluebutton/create`): the links of a BigBlueButton call, as a
//! Zulip server makes them. Agora has no BigBlueButton server: the link leads to
//! `/calls/bigbluebutton/join` (`http::pages::calls`), which says so, as Zulip's does when
//! none is configured. Zoom, Webex and the other providers' routes are not served.

use actix_web::http::Method;
use actix_web::Scope;
use agora_actors::ids::UserId;
use agora_actors::json_object;
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
    scope.service(Endpoint::new("/calls/bigbluebutton/create").route(Method::GET, create_bigbluebutton_call).build())
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
