//! `/calls/bigbluebutton/join`: where the links of `GET /calls/bigbluebutton/create` lead.
//! Zulip's `join_bigbluebutton` sends a signed-in browser on to the BigBlueButton server;
//! Agora has none, and answers as Zulip does when none is configured.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::ApiError;

use super::{no_organization, realm_of};
use crate::http::response::error_response;
use crate::http::session;
use crate::http::state::AppState;

/// `GET /calls/bigbluebutton/join`: a browser that is not signed in goes to the sign-in
/// page (and back here after); then `bigbluebutton` is required; then Zulip's error of a
/// server without BigBlueButton.
pub async fn join_bigbluebutton(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    if realm_of(&req, &state).await.is_none() {
        return no_organization();
    }
    if session::authenticate(&state, &req).await.is_err() {
        let here = req.uri().path_and_query().map_or("/", |p| p.as_str());
        let next: String = form_urlencoded::byte_serialize(here.as_bytes()).collect();
        return HttpResponse::Found().insert_header((header::LOCATION, format!("/login/?next={next}"))).finish();
    }
    let query: Vec<(String, String)> = form_urlencoded::parse(req.query_string().as_bytes()).into_owned().collect();
    if !query.iter().any(|(name, _)| name == "bigbluebutton") {
        return error_response(&ApiError::missing_argument("bigbluebutton"));
    }
    error_response(&ApiError::bad_request("BigBlueButton is not configured."))
}
