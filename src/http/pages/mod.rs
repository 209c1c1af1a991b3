//! The HTML pages Agora serves itself, outside the API: the web client's page (`/`), signing
//! in and out, password resets, the sign-up pages of invitation links, and where video call
//! links lead. Rendered by
//! templates (`templates/`, HTML escaped by default), accessible (labels, error summaries
//! announced to screen readers), without any script but the web client's own module, and
//! protected against cross-site requests by a double-submit token (a `SameSite=Strict`
//! cookie and the same value in the form) and a check of `Origin`.

pub mod app;
pub mod calls;
pub mod login;
pub mod reset;
pub mod signup;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::registry::RealmHandle;
use agora_actors::secrets::{random_alphanumeric, secrets_equal};
use askama::Template;

use super::assets;
use super::auth::request_host;
use super::body::{read_all, BodyRules};
use super::state::AppState;

/// The cookie and form field carrying the pages' anti-forgery token (the field as Django
/// names it).
pub const CSRF_COOKIE: &str = "agora_csrftoken";
pub const CSRF_FIELD: &str = "csrfmiddlewaretoken";

/// The largest form body a page accepts.
const MAX_FORM_BYTES: usize = 16 * 1024;

/// What the pages may load: their stylesheet, nothing else; no other site may frame them.
const PAGE_CSP: &str =
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Registers the pages (and the web client's files).
pub fn configure(cfg: &mut web::ServiceConfig) {
    assets::configure(cfg);
    let listed = super::routes::listed;
    cfg.service(listed(&["GET"], "/").route(web::get().to(app::show)).route(web::head().to(app::show)))
        .service(
            listed(&["GET", "POST"], "/login/").route(web::get().to(login::show)).route(web::post().to(login::submit)),
        )
        .service(listed(&["POST"], "/accounts/logout/").route(web::post().to(login::logout)))
        .service(
            listed(&["GET", "POST"], "/accounts/password/reset/")
                .route(web::get().to(reset::show_request))
                .route(web::post().to(reset::submit_request)),
        )
        .service(
            listed(&["GET", "POST"], "/accounts/password/reset/{token}/")
                .route(web::get().to(reset::show_new_password))
                .route(web::post().to(reset::submit_new_password)),
        )
        .service(
            listed(&["GET", "POST"], "/accounts/do_confirm/{key}")
                .route(web::get().to(signup::show))
                .route(web::post().to(signup::submit)),
        )
        .service(
            listed(&["GET", "POST"], "/join/{key}/")
                .route(web::get().to(signup::show))
                .route(web::post().to(signup::submit)),
        )
        .service(
            listed(&["GET"], "/calls/bigbluebutton/join")
                .route(web::get().to(calls::join_bigbluebutton))
                .route(web::head().to(calls::join_bigbluebutton)),
        );
}

/// The page's frame: the organization's name (or the server's) and the stylesheet.
pub struct Frame {
    pub site: String,
    pub css: String,
}

impl Frame {
    /// The frame of a page of `realm` (or of the server, without one).
    pub fn of(realm: Option<&RealmHandle>) -> Frame {
        let site = realm.map_or_else(|| "Agora".to_owned(), |r| r.state().realm().name.clone());
        Frame { site, css: assets::url("pages.css") }
    }
}

/// One input of a form, with its hint and its error.
#[derive(Debug, Clone, Default)]
pub struct Field {
    pub name: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    pub value: String,
    pub autocomplete: &'static str,
    pub hint: Option<String>,
    pub error: Option<String>,
}

impl Field {
    /// What describes the input: its hint and its error.
    pub fn described_by(&self) -> String {
        let hint = self.hint.as_ref().map(|_| format!("{}-hint", self.name));
        let error = self.error.as_ref().map(|_| format!("{}-error", self.name));
        hint.into_iter().chain(error).collect::<Vec<_>>().join(" ")
    }
}

/// A page with one form (`templates/form.html`).
#[derive(Template)]
#[template(path = "form.html")]
pub struct FormPage {
    pub site: String,
    pub css: String,
    pub title: String,
    pub errors: Vec<String>,
    pub notice: Option<String>,
    pub intro: Vec<String>,
    pub action: String,
    pub csrf: String,
    pub hidden: Vec<(String, String)>,
    /// Facts shown in the form, not asked: (label, element id, value).
    pub fixed: Vec<(String, String, String)>,
    pub fields: Vec<Field>,
    pub submit: String,
    pub links: Vec<(String, String)>,
}

impl FormPage {
    /// A form titled `title` posting to `action` with a fresh anti-forgery token; the token
    /// goes in the cookie of [`FormPage::respond`].
    pub fn new(frame: Frame, title: impl Into<String>, action: impl Into<String>, submit: impl Into<String>) -> Self {
        FormPage {
            site: frame.site,
            css: frame.css,
            title: title.into(),
            errors: Vec::new(),
            notice: None,
            intro: Vec::new(),
            action: action.into(),
            csrf: random_alphanumeric(32),
            hidden: Vec::new(),
            fixed: Vec::new(),
            fields: Vec::new(),
            submit: submit.into(),
            links: Vec::new(),
        }
    }

    /// The page, with the browser's anti-forgery token: the one its cookie already holds
    /// (so that two open forms both stay valid), or a new one in a new cookie.
    pub fn respond(mut self, req: &HttpRequest, status: StatusCode, secure: bool) -> HttpResponse {
        let existing = req.cookie(CSRF_COOKIE).map(|c| c.value().to_owned());
        let reuse = existing.filter(|v| v.len() == 32 && v.bytes().all(|b| b.is_ascii_alphanumeric()));
        let fresh = reuse.is_none();
        if let Some(token) = reuse {
            self.csrf = token;
        }
        let mut response = render(status, &self);
        if fresh {
            let _ = response.add_cookie(&csrf_cookie(&self.csrf, secure));
        }
        response
    }
}

/// A page that only says something (`templates/message.html`).
#[derive(Template)]
#[template(path = "message.html")]
pub struct MessagePage {
    pub site: String,
    pub css: String,
    pub title: String,
    pub paragraphs: Vec<String>,
    /// (label, element id, value), shown as code.
    pub facts: Vec<(String, String, String)>,
    pub links: Vec<(String, String)>,
}

/// A page saying `paragraphs` under `title`.
pub fn message_page(status: StatusCode, frame: Frame, title: &str, paragraphs: &[&str]) -> HttpResponse {
    let page = MessagePage {
        site: frame.site,
        css: frame.css,
        title: title.to_owned(),
        paragraphs: paragraphs.iter().map(|p| (*p).to_owned()).collect(),
        facts: Vec::new(),
        links: Vec::new(),
    };
    render(status, &page)
}

/// A page with the pages' headers: never cached, never framed, nothing but its stylesheet.
pub fn render(status: StatusCode, page: &impl Template) -> HttpResponse {
    match page.render() {
        Ok(html) => with_page_headers(HttpResponse::build(status), PAGE_CSP).body(html),
        Err(e) => {
            tracing::error!(error = %e, "a page could not be rendered");
            HttpResponse::InternalServerError()
                .content_type("text/plain; charset=utf-8")
                .body("Internal server error\n")
        }
    }
}

/// The headers of every page: its type, no caching, its content policy, no framing, no
/// referrer to other sites.
pub fn with_page_headers(mut builder: actix_web::HttpResponseBuilder, csp: &str) -> actix_web::HttpResponseBuilder {
    builder
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Content-Security-Policy", csp.to_owned()))
        .insert_header(("Referrer-Policy", "same-origin"));
    builder
}

/// A redirection after a form (303: the browser follows with GET).
pub fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, location.to_owned())).finish()
}

/// The organization the request's host names, if any.
pub async fn realm_of(req: &HttpRequest, state: &AppState) -> Option<RealmHandle> {
    let subdomain = state.config.subdomain_for_host(request_host(req));
    state.realms.find(&subdomain).await.ok().flatten()
}

/// Whether cookies must be `Secure` (the server is reached over HTTPS).
pub fn secure(state: &AppState) -> bool {
    state.config.external_scheme == "https"
}

/// The page of a host that names no organization.
pub fn no_organization() -> HttpResponse {
    message_page(
        StatusCode::NOT_FOUND,
        Frame::of(None),
        "Organization not found",
        &["There is no organization at this address. Check the address you were given."],
    )
}

/// The page of a request the server could not handle just now.
pub fn unavailable() -> HttpResponse {
    message_page(
        StatusCode::SERVICE_UNAVAILABLE,
        Frame::of(None),
        "Please try again",
        &["The server could not handle this request just now. Please try again in a moment."],
    )
}

/// The API's per-address rate limit (`api_by_ip`), applied to a page's form too (one address
/// trying a password across many accounts, say): the page to answer with, if refused.
pub fn refused_address(req: &HttpRequest, state: &AppState, frame: Frame) -> Option<HttpResponse> {
    match state.limits.by_ip(req, std::time::Instant::now()) {
        Some(verdict) if !verdict.allowed => {
            let secs = verdict.reset_after.as_secs().max(1);
            let text = format!("Too many requests from your address. Please try again in {secs} seconds.");
            let mut response = message_page(StatusCode::TOO_MANY_REQUESTS, frame, "Please wait", &[&text]);
            if let Ok(value) = header::HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            Some(response)
        }
        _ => None,
    }
}

/// The page of a form sent from elsewhere, or too old.
pub fn forged(frame: Frame, again: &str) -> HttpResponse {
    let text = format!("This form was sent from somewhere else, or it is too old. {again}");
    message_page(StatusCode::FORBIDDEN, frame, "Please try again", &[&text])
}

/// The anti-forgery cookie of a form.
fn csrf_cookie(token: &str, secure: bool) -> Cookie<'static> {
    Cookie::build(CSRF_COOKIE, token.to_owned())
        .path("/")
        .http_only(true)
        .secure(secure)
        .same_site(SameSite::Strict)
        .finish()
}

/// Whether a form submission comes from a page of this server: its `Origin` (when sent)
/// names the request's own host, and its token matches the cookie.
pub fn csrf_ok(req: &HttpRequest, form_token: Option<&str>) -> bool {
    if let Some(origin) = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let host = request_host(req);
        let origin_host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
        if !origin_host.eq_ignore_ascii_case(host) {
            return false;
        }
    }
    match (req.cookie(CSRF_COOKIE), form_token) {
        (Some(cookie), Some(token)) => !token.is_empty() && secrets_equal(cookie.value(), token),
        _ => false,
    }
}

/// The fields of an url-encoded form body (the last value of a repeated name wins).
pub fn form_fields(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body).into_owned().collect()
}

/// How a page's form body is read: at most 16 KiB, within the API's body timeouts
/// (`[request_body]`): a body that trickles in is answered, not waited for.
fn form_rules(req: &HttpRequest) -> BodyRules {
    let params = req.app_data::<web::Data<AppState>>().map(|state| state.limits.params_body).unwrap_or_default();
    BodyRules { max_bytes: MAX_FORM_BYTES.min(params.max_bytes), ..params }
}

/// A page's submitted form, read within [`form_rules`].
pub struct PageForm(pub Vec<(String, String)>);

/// A form body that was too large or too slow: a page saying so, the connection closed
/// (the rest of the body is not read).
#[derive(Debug)]
pub struct FormBodyError(u16);

impl std::fmt::Display for FormBodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "form body refused ({})", self.0)
    }
}

impl actix_web::ResponseError for FormBodyError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.0).unwrap_or(StatusCode::BAD_REQUEST)
    }

    fn error_response(&self) -> HttpResponse {
        let text = match self.0 {
            408 => "The form took too long to arrive. Please try again.",
            413 => "The form was too large.",
            _ => "The form could not be read. Please try again.",
        };
        let mut response = message_page(self.status_code(), Frame::of(None), "Please try again", &[text]);
        response.head_mut().set_connection_type(actix_web::http::ConnectionType::Close);
        response
    }
}

impl actix_web::FromRequest for PageForm {
    type Error = FormBodyError;
    type Future = futures_util::future::LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let (payload, rules) = (payload.take(), form_rules(req));
        Box::pin(async move {
            match read_all(payload, &rules).await {
                Ok(body) => Ok(PageForm(form_fields(&body))),
                Err(e) if e.code == Some(agora_actors::error::ErrorCode::RequestTimeout) => Err(FormBodyError(408)),
                Err(e) => Err(FormBodyError(e.status)),
            }
        })
    }
}

/// The value of `name` in a form.
pub fn form_value(form: &[(String, String)], name: &str) -> Option<String> {
    form.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}
