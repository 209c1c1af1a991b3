//! The sign-up page of an invitation link: `GET` shows the form (or why the link cannot be
//! used), `POST` creates the account and signs the new user in.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::realm::catalog::{PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH};
use agora_actors::realm::onboarding::{
    CheckInviteLink, FieldErrors, JoinOrganization, JoinOutcome, LinkInfo, LinkProblem, SignUp,
};
use agora_actors::registry::RealmHandle;
use agora_actors::secrets::{hash_password, password_is_strong};

use super::login::signed_in_response;
use super::{
    forged, form_value, message_page, no_organization, realm_of, secure, unavailable, Field, FormPage, Frame,
    CSRF_FIELD,
};
use crate::http::state::AppState;

/// What the visitor typed (the password is never shown again).
#[derive(Debug, Default)]
struct Typed {
    email: String,
    full_name: String,
}

/// The page of a link that cannot be used.
fn link_problem(realm: &RealmHandle, problem: LinkProblem) -> HttpResponse {
    let (status, title, text) = match problem {
        LinkProblem::Unknown => (
            StatusCode::NOT_FOUND,
            "Invitation link not found",
            "This invitation link is not valid. Check that you copied the whole link, or ask the person who invited you for a new invitation.",
        ),
        LinkProblem::Expired => (
            StatusCode::GONE,
            "Invitation link expired",
            "This invitation link has expired. Ask the person who invited you for a new invitation.",
        ),
        LinkProblem::Used => (
            StatusCode::GONE,
            "Invitation already used",
            "This invitation link has already been used to create an account. If it is yours, log in with the email address and password you chose.",
        ),
        LinkProblem::Revoked => (
            StatusCode::GONE,
            "Invitation revoked",
            "This invitation has been revoked. Ask the organization's administrators for a new invitation if you still need one.",
        ),
        LinkProblem::RealmDeactivated => {
            (StatusCode::GONE, "Organization deactivated", "This organization has been deactivated.")
        }
    };
    message_page(status, Frame::of(Some(realm)), title, &[text])
}

/// The sign-up form, with the errors of a refused submission.
fn form_page(realm: &RealmHandle, action: &str, info: &LinkInfo, typed: &Typed, errors: &FieldErrors) -> FormPage {
    let title = format!("Join {}", info.realm_name);
    let mut page = FormPage::new(Frame::of(Some(realm)), title, action, "Create account");
    let error_of = |field: &str| errors.iter().find(|(f, _)| *f == field).map(|(_, e)| e.clone());
    page.errors = errors.iter().map(|(_, e)| e.clone()).collect();
    page.intro.push(format!("You have been invited to join {} on Zulip.", info.realm_name));
    match &info.email {
        Some(email) => page.fixed.push(("Email address".into(), "email".into(), email.clone())),
        None => page.fields.push(Field {
            name: "email",
            label: "Email address",
            kind: "email",
            value: typed.email.clone(),
            autocomplete: "email",
            hint: None,
            error: error_of("email"),
        }),
    }
    page.fields.push(Field {
        name: "full_name",
        label: "Full name",
        kind: "text",
        value: typed.full_name.clone(),
        autocomplete: "name",
        hint: None,
        error: error_of("full_name"),
    });
    page.fields.push(Field {
        name: "password",
        label: "Password",
        kind: "password",
        value: String::new(),
        autocomplete: "new-password",
        hint: Some(format!(
            "At least {PASSWORD_MIN_LENGTH} characters, at most {PASSWORD_MAX_LENGTH}; it must not be easy to guess."
        )),
        error: error_of("password"),
    });
    page
}

/// `GET /accounts/do_confirm/{key}` and `GET /join/{key}/`.
pub async fn show(req: HttpRequest, key: web::Path<String>, state: web::Data<AppState>) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    match realm.addr.send(CheckInviteLink { key: key.into_inner() }).await {
        Ok(Ok(info)) => form_page(&realm, req.path(), &info, &Typed::default(), &Vec::new()).respond(
            &req,
            StatusCode::OK,
            secure(&state),
        ),
        Ok(Err(problem)) => link_problem(&realm, problem),
        Err(_) => unavailable(),
    }
}

/// Zulip's password field rules, in its order: required, at most 100 characters, strong
/// enough (zxcvbn).
pub fn password_problem(password: &str) -> Option<String> {
    let len = password.chars().count();
    if password.is_empty() {
        Some("This field is required.".to_owned())
    } else if len > PASSWORD_MAX_LENGTH {
        Some(format!("Ensure this value has at most {PASSWORD_MAX_LENGTH} characters (it has {len})."))
    } else if !password_is_strong(password) {
        Some("The password is too weak.".to_owned())
    } else {
        None
    }
}

/// Hashes an acceptable password on the hashing pool; `Err` is the page to answer with.
pub async fn hash_new_password(state: &AppState, password: String) -> Result<String, HttpResponse> {
    let cost = state.password_cost;
    match state.hashing.run(move || hash_password(&password, cost)).await {
        Ok(Ok(hash)) => Ok(hash),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "password hashing failed");
            Err(unavailable())
        }
        Err(_) => Err(unavailable()),
    }
}

/// `POST /accounts/do_confirm/{key}` and `POST /join/{key}/`: the account, then the new
/// user signed in and on the way to the web client.
pub async fn submit(
    req: HttpRequest,
    key: web::Path<String>,
    form: super::PageForm,
    state: web::Data<AppState>,
) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    let form = form.0;
    if !super::csrf_ok(&req, form_value(&form, CSRF_FIELD).as_deref()) {
        return forged(Frame::of(Some(&realm)), "Open the invitation link again and fill in the form there.");
    }
    if let Some(page) = super::refused_address(&req, &state, Frame::of(Some(&realm))) {
        return page;
    }
    let key = key.into_inner();
    let info = match realm.addr.send(CheckInviteLink { key: key.clone() }).await {
        Ok(Ok(info)) => info,
        Ok(Err(problem)) => return link_problem(&realm, problem),
        Err(_) => return unavailable(),
    };
    let typed = Typed {
        email: form_value(&form, "email").unwrap_or_default(),
        full_name: form_value(&form, "full_name").unwrap_or_default(),
    };
    let password = form_value(&form, "password").unwrap_or_default();
    let password_error = password_problem(&password);
    let password_hash = match password_error {
        None => match hash_new_password(&state, password).await {
            Ok(hash) => Some(hash),
            Err(page) => return page,
        },
        Some(_) => None,
    };
    let signup = SignUp {
        key,
        email: info.email.is_none().then(|| typed.email.clone()),
        full_name: typed.full_name.clone(),
        password_hash,
        password_error,
    };
    match realm.addr.send(JoinOrganization(signup)).await {
        Ok(Ok(Ok(created))) => {
            tracing::info!(realm.id = %realm.id, user.id = %created.user_id, "joined through an invitation");
            signed_in_response(&req, &state, &realm, created.user_id, "/").await
        }
        Ok(Ok(Err(JoinOutcome::Form(errors)))) => {
            form_page(&realm, req.path(), &info, &typed, &errors).respond(&req, StatusCode::BAD_REQUEST, secure(&state))
        }
        Ok(Ok(Err(JoinOutcome::Link(problem)))) => link_problem(&realm, problem),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "sign-up failed");
            unavailable()
        }
        Err(_) => unavailable(),
    }
}
