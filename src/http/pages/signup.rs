//! The sign-up page of an invitation link: `GET` shows the form (or why the link cannot be
//! used), `POST` creates the account and says where to go next.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::realm::catalog::{PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH};
use agora_actors::realm::onboarding::{
    CheckInviteLink, FieldErrors, JoinOrganization, JoinOutcome, LinkInfo, LinkProblem, SignUp,
};
use agora_actors::registry::RealmHandle;
use agora_actors::secrets::{hash_password, password_is_strong};

use super::{csrf_ok, escape, message_page, new_csrf_token, page, CSRF_FIELD};
use crate::http::auth::request_host;
use crate::http::state::AppState;

/// What the visitor typed (the password is never shown again).
#[derive(Debug, Default)]
struct Typed {
    email: String,
    full_name: String,
}

/// The organization the request's host names, if any.
async fn realm_of(req: &HttpRequest, state: &AppState) -> Option<RealmHandle> {
    let subdomain = state.config.subdomain_for_host(request_host(req));
    state.realms.find(&subdomain).await.ok().flatten()
}

fn no_organization() -> HttpResponse {
    message_page(
        StatusCode::NOT_FOUND,
        "Organization not found",
        &["There is no organization at this address. Check the link you were sent.".to_owned()],
    )
}

fn unavailable() -> HttpResponse {
    message_page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Please try again",
        &["The server could not handle this request just now. Please try again in a moment.".to_owned()],
    )
}

/// The page of a link that cannot be used.
fn link_problem(problem: LinkProblem) -> HttpResponse {
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
    message_page(status, title, &[text.to_owned()])
}

/// The sign-up form, with the errors of a refused submission.
fn form_page(status: StatusCode, info: &LinkInfo, typed: &Typed, errors: &FieldErrors, secure: bool) -> HttpResponse {
    let (token, cookie) = new_csrf_token(secure);
    let error_of = |field: &str| errors.iter().find(|(f, _)| *f == field).map(|(_, e)| e.as_str());
    let field = |name: &str, label: &str, kind: &str, value: &str, autocomplete: &str, hint: Option<&str>| {
        let error = error_of(name);
        let mut described = Vec::new();
        let mut extra = String::new();
        if let Some(hint) = hint {
            described.push(format!("{name}-hint"));
            extra.push_str(&format!("<p class=\"hint\" id=\"{name}-hint\">{}</p>\n", escape(hint)));
        }
        if let Some(error) = error {
            described.push(format!("{name}-error"));
            extra.push_str(&format!("<p class=\"error\" id=\"{name}-error\">{}</p>\n", escape(error)));
        }
        let aria =
            if described.is_empty() { String::new() } else { format!(" aria-describedby=\"{}\"", described.join(" ")) };
        let invalid = if error.is_some() { " aria-invalid=\"true\"" } else { "" };
        format!(
            "<label for=\"{name}\">{label}</label>\n<input id=\"{name}\" name=\"{name}\" type=\"{kind}\" \
             value=\"{value}\" autocomplete=\"{autocomplete}\" required{aria}{invalid}>\n{extra}",
            value = escape(value),
        )
    };
    let mut body = format!("<h1>Join {}</h1>\n", escape(&info.realm_name));
    if !errors.is_empty() {
        let items: String = errors.iter().map(|(_, e)| format!("<li>{}</li>", escape(e))).collect();
        body.push_str(&format!(
            "<div role=\"alert\" id=\"errors\"><p>Please correct the following:</p><ul>{items}</ul></div>\n"
        ));
    }
    body.push_str(&format!(
        "<p>You have been invited to join {} on Zulip.</p>\n<form method=\"post\" novalidate>\n\
         <input type=\"hidden\" name=\"{CSRF_FIELD}\" value=\"{token}\">\n",
        escape(&info.realm_name)
    ));
    match &info.email {
        Some(email) => {
            body.push_str(&format!("<p>Email address: <strong id=\"email\">{}</strong></p>\n", escape(email)))
        }
        None => body.push_str(&field("email", "Email address", "email", &typed.email, "email", None)),
    }
    body.push_str(&field("full_name", "Full name", "text", &typed.full_name, "name", None));
    let rule = format!(
        "At least {PASSWORD_MIN_LENGTH} characters, at most {PASSWORD_MAX_LENGTH}; it must not be easy to guess."
    );
    body.push_str(&field("password", "Password", "password", "", "new-password", Some(&rule)));
    body.push_str("<button type=\"submit\">Create account</button>\n</form>\n");
    let mut response = page(status, &format!("Join {}", info.realm_name), &body);
    let _ = response.add_cookie(&cookie);
    response
}

/// `GET /accounts/do_confirm/{key}` and `GET /join/{key}/`.
pub async fn show(req: HttpRequest, key: web::Path<String>, state: web::Data<AppState>) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    match realm.addr.send(CheckInviteLink { key: key.into_inner() }).await {
        Ok(Ok(info)) => form_page(StatusCode::OK, &info, &Typed::default(), &Vec::new(), secure(&state)),
        Ok(Err(problem)) => link_problem(problem),
        Err(_) => unavailable(),
    }
}

fn secure(state: &AppState) -> bool {
    state.config.external_scheme == "https"
}

/// Zulip's password field rules, in its order: required, at most 100 characters, strong
/// enough (zxcvbn).
fn password_problem(password: &str) -> Option<String> {
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

/// `POST /accounts/do_confirm/{key}` and `POST /join/{key}/`.
pub async fn submit(
    req: HttpRequest,
    key: web::Path<String>,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> HttpResponse {
    let Some(realm) = realm_of(&req, &state).await else { return no_organization() };
    let form: Vec<(String, String)> = form_urlencoded::parse(&body).into_owned().collect();
    let value = |name: &str| form.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    if !csrf_ok(&req, value(CSRF_FIELD).as_deref()) {
        return message_page(
            StatusCode::FORBIDDEN,
            "Please try again",
            &["This form was sent from somewhere else, or it is too old. Open the invitation link again and fill in the form there.".to_owned()],
        );
    }
    let key = key.into_inner();
    let info = match realm.addr.send(CheckInviteLink { key: key.clone() }).await {
        Ok(Ok(info)) => info,
        Ok(Err(problem)) => return link_problem(problem),
        Err(_) => return unavailable(),
    };
    let typed = Typed { email: value("email").unwrap_or_default(), full_name: value("full_name").unwrap_or_default() };
    let password = value("password").unwrap_or_default();
    let password_error = password_problem(&password);
    let password_hash = if password_error.is_none() {
        let cost = state.password_cost;
        match state.hashing.run(move || hash_password(&password, cost)).await {
            Ok(Ok(hash)) => Some(hash),
            Ok(Err(e)) => {
                tracing::error!(error = %e, "password hashing failed");
                return unavailable();
            }
            Err(_) => return unavailable(),
        }
    } else {
        None
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
            let email = info.email.clone().unwrap_or(typed.email);
            joined_page(&info, &email)
        }
        Ok(Ok(Err(JoinOutcome::Form(errors)))) => {
            form_page(StatusCode::BAD_REQUEST, &info, &typed, &errors, secure(&state))
        }
        Ok(Ok(Err(JoinOutcome::Link(problem)))) => link_problem(problem),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "sign-up failed");
            unavailable()
        }
        Err(_) => unavailable(),
    }
}

/// Where to go once the account exists.
fn joined_page(info: &LinkInfo, email: &str) -> HttpResponse {
    message_page(
        StatusCode::OK,
        "Your account has been created",
        &[
            format!("Welcome to {}!", escape(&info.realm_name)),
            format!(
                "To log in, open a Zulip app (desktop, mobile or terminal) and enter this server's address: \
                 <code id=\"server-url\">{}</code>",
                escape(&info.realm_url)
            ),
            format!(
                "Then log in with <strong id=\"account-email\">{}</strong> and the password you chose.",
                escape(email)
            ),
        ],
    )
}
