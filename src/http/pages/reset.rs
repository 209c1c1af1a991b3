//! "Forgot password?": `/accounts/password/reset/` asks for the address and mails a link
//! (at most three an hour per address, and the page reads the same whether an account has
//! that address or not); `/accounts/password/reset/{token}/` sets the new password.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::ratelimit::{RateLimiter, Rule};
use agora_actors::realm::catalog::{PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH};
use agora_actors::realm::password_reset::{RequestPasswordReset, ResetPassword, ResetProblem};
use agora_actors::registry::RealmHandle;

use super::signup::{hash_new_password, password_problem};
use super::{
    forged, form_value, no_organization, realm_of, secure, unavailable, Field, FormPage, Frame, MessagePage, CSRF_FIELD,
};
use crate::http::state::AppState;

/// Reset mails per address: three an hour.
pub fn reset_mail_limiter() -> Mutex<RateLimiter> {
    Mutex::new(RateLimiter::new(Rule { max: 3, window: Duration::from_secs(3600) }))
}

fn request_form(realm: &RealmHandle, email: &str, error: Option<String>) -> FormPage {
    let mut page =
        FormPage::new(Frame::of(Some(realm)), "Reset your password", "/accounts/password/reset/", "Send reset link");
    page.intro.push("Enter your account's email address, and we will mail you a link to choose a new password.".into());
    page.fields.push(Field {
        name: "email",
        label: "Email",
        kind: "email",
        value: email.to_owned(),
        autocomplete: "username",
        error,
        ..Field::default()
    });
    page.links.push(("/login/".into(), "Back to log in".into()));
    page
}

/// `GET /accounts/password/reset/`.
pub async fn show_request(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    request_form(&realm, "", None).respond(&req, StatusCode::OK, secure(&state))
}

/// `POST /accounts/password/reset/`: the same answer whether or not the address has an
/// account here.
pub async fn submit_request(req: HttpRequest, form: super::PageForm, state: web::Data<AppState>) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    let form = form.0;
    if !super::csrf_ok(&req, form_value(&form, CSRF_FIELD).as_deref()) {
        return forged(Frame::of(Some(&realm)), "Open the password reset page again.");
    }
    if let Some(page) = super::refused_address(&req, &state, Frame::of(Some(&realm))) {
        return page;
    }
    let email = form_value(&form, "email").unwrap_or_default().trim().to_owned();
    if !email.contains('@') {
        let error = Some("Enter a valid email address.".to_owned());
        return request_form(&realm, &email, error).respond(&req, StatusCode::BAD_REQUEST, secure(&state));
    }
    let allowed = state
        .reset_mails
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .attempt(&email.to_lowercase(), Instant::now())
        .is_ok();
    if allowed {
        // Not waited for: an address with an account (a write and a mail) answers as fast as
        // one without.
        let (addr, wanted) = (realm.addr.clone(), email.clone());
        actix_web::rt::spawn(async move {
            match addr.send(RequestPasswordReset { email: wanted }).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "a password reset could not be recorded"),
                Err(e) => tracing::warn!(error = %e, "a password reset could not be recorded"),
            }
        });
    }
    let frame = Frame::of(Some(&realm));
    let page = MessagePage {
        site: frame.site,
        css: frame.css,
        title: "Check your email".into(),
        paragraphs: vec![
            format!(
                "If {email} is the address of an account of {}, a link to choose a new password is on its way.",
                realm.state().realm().name
            ),
            "The link works once, within 24 hours.".into(),
        ],
        facts: Vec::new(),
        links: vec![("/login/".into(), "Back to log in".into())],
    };
    super::render(StatusCode::OK, &page)
}

/// The page of a link that cannot be used.
fn link_problem(realm: &RealmHandle, problem: ResetProblem) -> HttpResponse {
    let (status, title, text) = match problem {
        ResetProblem::Unknown => (
            StatusCode::NOT_FOUND,
            "Reset link not found",
            "This password reset link is not valid. Check that you copied the whole link, or ask for a new one.",
        ),
        ResetProblem::Expired => {
            (StatusCode::GONE, "Reset link expired", "This password reset link has expired. Ask for a new one.")
        }
        ResetProblem::Used => (
            StatusCode::GONE,
            "Reset link already used",
            "This password reset link has already been used. If you need to, ask for a new one.",
        ),
    };
    let frame = Frame::of(Some(realm));
    let page = MessagePage {
        site: frame.site,
        css: frame.css,
        title: title.into(),
        paragraphs: vec![text.into()],
        facts: Vec::new(),
        links: vec![("/accounts/password/reset/".into(), "Ask for a new link".into())],
    };
    super::render(status, &page)
}

fn new_password_form(realm: &RealmHandle, action: &str, error: Option<String>) -> FormPage {
    let mut page = FormPage::new(Frame::of(Some(realm)), "Choose a new password", action, "Set password");
    page.fields.push(Field {
        name: "new_password",
        label: "New password",
        kind: "password",
        autocomplete: "new-password",
        hint: Some(format!(
            "At least {PASSWORD_MIN_LENGTH} characters, at most {PASSWORD_MAX_LENGTH}; it must not be easy to guess."
        )),
        error,
        ..Field::default()
    });
    page
}

/// Whether a link can be used now, as the page shows it (the write checks again).
async fn check(state: &AppState, realm: &RealmHandle, token: &str) -> Result<(), HttpResponse> {
    let store = state.store.clone();
    let hash = agora_actors::sessions::token_hash(token);
    let row = web::block(move || -> Result<_, agora_actors::store::StoreError> {
        agora_actors::store::web_sessions::get_reset(&*store.conn()?, &hash)
    })
    .await;
    let row = match row {
        Ok(Ok(row)) => row,
        _ => return Err(unavailable()),
    };
    let auth = realm.auth();
    let eligible = |user| auth.by_id(user).is_some_and(|e| e.is_active && !e.is_bot) && !auth.realm_deactivated;
    let now = agora_actors::clock::now();
    agora_actors::realm::password_reset::ops::check_link(row.as_ref(), realm.id, eligible, now)
        .map(|_| ())
        .map_err(|problem| link_problem(realm, problem))
}

/// `GET /accounts/password/reset/{token}/`.
pub async fn show_new_password(req: HttpRequest, token: web::Path<String>, state: web::Data<AppState>) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    if let Err(page) = check(&state, &realm, &token).await {
        return page;
    }
    new_password_form(&realm, req.path(), None).respond(&req, StatusCode::OK, secure(&state))
}

/// `POST /accounts/password/reset/{token}/`: the new password, then the sign-in page.
pub async fn submit_new_password(
    req: HttpRequest,
    token: web::Path<String>,
    form: super::PageForm,
    state: web::Data<AppState>,
) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    let form = form.0;
    if !super::csrf_ok(&req, form_value(&form, CSRF_FIELD).as_deref()) {
        return forged(Frame::of(Some(&realm)), "Open the link from the mail again.");
    }
    if let Err(page) = check(&state, &realm, &token).await {
        return page;
    }
    let password = form_value(&form, "new_password").unwrap_or_default();
    if let Some(problem) = password_problem(&password) {
        return new_password_form(&realm, req.path(), Some(problem)).respond(
            &req,
            StatusCode::BAD_REQUEST,
            secure(&state),
        );
    }
    let password_hash = match hash_new_password(&state, password).await {
        Ok(hash) => hash,
        Err(page) => return page,
    };
    match realm.addr.send(ResetPassword { token: token.into_inner(), password_hash }).await {
        Ok(Ok(Ok(_))) => {
            let frame = Frame::of(Some(&realm));
            let page = MessagePage {
                site: frame.site,
                css: frame.css,
                title: "Password changed".into(),
                paragraphs: vec![
                    "Your password has been changed. Every browser that was signed in to your account has been signed out.".into(),
                ],
                facts: Vec::new(),
                links: vec![("/login/".into(), "Log in".into())],
            };
            super::render(StatusCode::OK, &page)
        }
        Ok(Ok(Err(problem))) => link_problem(&realm, problem),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "a password reset failed");
            unavailable()
        }
        Err(_) => unavailable(),
    }
}
