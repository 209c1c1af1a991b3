//! `/`: the web client for a signed-in browser (its page loads one module, which does the
//! rest through `/json/...`); the sign-in page for anyone else.

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::secrets::random_alphanumeric;
use askama::Template;

use super::{no_organization, realm_of, secure, with_page_headers};
use crate::http::assets;
use crate::http::session::{self, csrf_cookie, CSRF_COOKIE};
use crate::http::state::AppState;

/// What the web client's page may load and do: its own scripts, styles, images and API,
/// nothing from anywhere else, nothing inline; no other site may frame it.
const APP_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
                       media-src 'self'; connect-src 'self'; font-src 'self'; manifest-src 'self'; \
                       form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

#[derive(Template)]
#[template(path = "app.html")]
struct AppPage {
    realm_name: String,
    css: String,
    js: String,
}

/// `GET /`.
pub async fn show(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    if session::authenticate(&state, &req).await.is_err() {
        return HttpResponse::Found().insert_header((header::LOCATION, "/login/")).finish();
    }
    let page = AppPage {
        realm_name: realm.state().realm().name.clone(),
        css: assets::url("app.css"),
        js: assets::url("app.js"),
    };
    let html = match page.render() {
        Ok(html) => html,
        Err(e) => {
            tracing::error!(error = %e, "the web client's page could not be rendered");
            return HttpResponse::InternalServerError().finish();
        }
    };
    let mut response = with_page_headers(HttpResponse::build(StatusCode::OK), APP_CSP).body(html);
    // The script echoes this cookie in `X-CSRFToken`: a browser without one gets one.
    if req.cookie(CSRF_COOKIE).is_none_or(|c| c.value().is_empty()) {
        let _ = response.add_cookie(&csrf_cookie(&random_alphanumeric(32), secure(&state)));
    }
    response
}
