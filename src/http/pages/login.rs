//! Signing in (`/login/`, the same rate limit and password checks as `POST /fetch_api_key`)
//! and out (`POST /accounts/logout/`). The sign-in page says the same for an unknown address
//! as for a wrong password, and takes the same time (the login check verifies a decoy hash).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::error::ErrorCode;
use agora_actors::ids::UserId;
use agora_actors::realm::users::RecordLogin;
use agora_actors::registry::RealmHandle;
use agora_actors::secrets::{random_alphanumeric, secrets_equal};
use agora_actors::ApiError;

use super::{
    forged, form_value, no_organization, realm_of, secure, see_other, unavailable, Field, FormPage, Frame, CSRF_FIELD,
};
use crate::http::session::{self, csrf_cookie, ended_session_cookie, session_cookie, session_token, CSRF_HEADER};
use crate::http::state::AppState;

/// Where to go after signing in: a path of this site, `/` otherwise.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.starts_with("/\\")
                && !path.chars().any(char::is_control) =>
        {
            path.to_owned()
        }
        _ => "/".to_owned(),
    }
}

/// The sign-in form.
fn login_form(realm: &RealmHandle, next: &str, email: &str, error: Option<String>) -> FormPage {
    let name = realm.state().realm().name.clone();
    let mut page = FormPage::new(Frame::of(Some(realm)), format!("Log in to {name}"), "/login/", "Log in");
    page.errors.extend(error);
    page.hidden.push(("next".into(), next.to_owned()));
    page.fields.push(Field {
        name: "username",
        label: "Email",
        kind: "email",
        value: email.to_owned(),
        autocomplete: "username",
        ..Field::default()
    });
    page.fields.push(Field {
        name: "password",
        label: "Password",
        kind: "password",
        autocomplete: "current-password",
        ..Field::default()
    });
    page.links.push(("/accounts/password/reset/".into(), "Forgot password?".into()));
    page
}

/// `GET /login/`: the form, or straight on for a browser already signed in.
pub async fn show(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<HashMap<String, String>>,
) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    let next = safe_next(query.get("next").map(String::as_str));
    if session::authenticate(&state, &req).await.is_ok() {
        return see_other(&next);
    }
    login_form(&realm, &next, "", None).respond(&req, StatusCode::OK, secure(&state))
}

/// What the sign-in page says of a refused attempt: how long to wait when rate-limited,
/// otherwise one message whatever the reason (no hint whether the address exists).
fn refusal_text(err: &ApiError) -> String {
    match err.code {
        Some(ErrorCode::RateLimitHit) => {
            let secs = err.data.get("retry-after").and_then(serde_json::Value::as_f64).unwrap_or(1.0).ceil();
            format!("Too many attempts to log in. Please try again in {secs} seconds.")
        }
        _ => "Incorrect email or password.".to_owned(),
    }
}

/// `POST /login/`: the credentials checked as `POST /fetch_api_key` checks them (argon2 on
/// the hashing pool), then a new session.
pub async fn submit(req: HttpRequest, form: super::PageForm, state: web::Data<AppState>) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    let form = form.0;
    if !super::csrf_ok(&req, form_value(&form, CSRF_FIELD).as_deref()) {
        return forged(Frame::of(Some(&realm)), "Open the sign-in page again and log in there.");
    }
    let username = form_value(&form, "username").unwrap_or_default();
    let password = form_value(&form, "password").unwrap_or_default();
    let next = safe_next(form_value(&form, "next").as_deref());
    if let Some(page) = super::refused_address(&req, &state, Frame::of(Some(&realm))) {
        return page;
    }
    let refuse = |err: ApiError| {
        login_form(&realm, &next, &username, Some(refusal_text(&err))).respond(&req, StatusCode::OK, secure(&state))
    };
    let pending = match state.logins.begin(&realm.auth(), &username, Instant::now()) {
        Ok(pending) => pending,
        Err(err) if err.code == Some(ErrorCode::RateLimitHit) => return refuse(err),
        Err(err) => {
            // Refused before its password was checked (a deactivated account): it takes as
            // long as a wrong password, so that the time tells nothing either.
            let shared = state.clone();
            let _ = state.hashing.run(move || shared.logins.waste_verification(&password)).await;
            return refuse(err);
        }
    };
    let verified = state
        .hashing
        .run(move || {
            let verified = pending.verify(&password);
            (pending, verified)
        })
        .await;
    let Ok((pending, verified)) = verified else { return unavailable() };
    match state.logins.finish(&realm.auth(), pending, verified) {
        Ok(creds) => signed_in_response(&req, &state, &realm, creds.user_id, &next).await,
        Err(err) => refuse(err),
    }
}

/// A new session for `user_id` (the browser's previous one ended: sessions are rotated at
/// sign-in), its cookies, and a redirection to `next`.
pub async fn signed_in_response(
    req: &HttpRequest,
    state: &AppState,
    realm: &RealmHandle,
    user_id: UserId,
    next: &str,
) -> HttpResponse {
    let Some(entry) = realm.auth().by_id(user_id).cloned() else { return unavailable() };
    if entry.is_bot || !entry.is_active {
        return forged(Frame::of(Some(realm)), "Log in with a person's account.");
    }
    // The first login of an imported stub or an API-made account (FL 433, 475).
    match realm.addr.send(RecordLogin { user_id }).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::error!(error = %e.msg, "could not record a login");
            return unavailable();
        }
        Err(_) => return unavailable(),
    }
    let sessions = Arc::clone(&state.sessions);
    let (old, realm_id) = (session_token(req), realm.id);
    let started = web::block(move || {
        if let Some(old) = old {
            sessions.end(&old)?;
        }
        sessions.start(realm_id, &entry, agora_actors::clock::now())
    })
    .await;
    let new = match started {
        Ok(Ok(new)) => new,
        Ok(Err(e)) => {
            tracing::error!(error = %e, "could not start a session");
            return unavailable();
        }
        Err(_) => return unavailable(),
    };
    tracing::info!(realm.id = %realm.id, user.id = %user_id, "signed in");
    let secure = secure(state);
    let mut response = see_other(next);
    let _ = response.add_cookie(&session_cookie(&new.token, secure));
    let _ = response.add_cookie(&csrf_cookie(&random_alphanumeric(32), secure));
    response
}

/// `POST /accounts/logout/`: with the `csrftoken` cookie's value in the `X-CSRFToken`
/// header or the `csrfmiddlewaretoken` field (as Zulip's sign-out form sends it).
pub async fn logout(req: HttpRequest, form: super::PageForm, state: web::Data<AppState>) -> HttpResponse {
    let form = form.0;
    let header = req.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let sent = header.or_else(|| form_value(&form, CSRF_FIELD));
    let cookie = req.cookie(session::CSRF_COOKIE).map(|c| c.value().to_owned());
    let same_origin = session::check_csrf_origin(&req);
    let genuine = same_origin
        && matches!((&sent, &cookie), (Some(sent), Some(cookie)) if !cookie.is_empty() && secrets_equal(sent, cookie));
    if !genuine {
        let realm = realm_of(&req, &state).await;
        return forged(Frame::of(realm.as_ref()), "Use the Log out button of the page.");
    }
    if let Some(token) = session_token(&req) {
        let sessions = Arc::clone(&state.sessions);
        if let Ok(Err(e)) = web::block(move || sessions.end(&token)).await {
            tracing::error!(error = %e, "could not end a session");
            return unavailable();
        }
    }
    let mut response = see_other("/login/");
    let _ = response.add_cookie(&ended_session_cookie(secure(&state)));
    response
}
