//! The few HTML pages Agora serves itself (outside `/api/v1`): the sign-up pages of
//! invitation links. Small, server-rendered, accessible (labels, error summaries announced
//! to screen readers, no script), protected against cross-site requests by a
//! double-submit token (a `SameSite=Strict` cookie and the same value in the form) and a
//! check of `Origin`.

pub mod signup;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use agora_actors::secrets::{random_alphanumeric, secrets_equal};

/// The cookie and form field carrying the anti-forgery token (the field as Django names it).
pub const CSRF_COOKIE: &str = "agora_csrftoken";
pub const CSRF_FIELD: &str = "csrfmiddlewaretoken";

/// The largest form body a page accepts.
const MAX_FORM_BYTES: usize = 16 * 1024;

/// Registers the pages.
pub fn configure(cfg: &mut web::ServiceConfig) {
    let form_limit = web::PayloadConfig::new(MAX_FORM_BYTES);
    cfg.service(
        web::resource("/accounts/do_confirm/{key}")
            .app_data(form_limit.clone())
            .route(web::get().to(signup::show))
            .route(web::post().to(signup::submit)),
    )
    .service(
        web::resource("/join/{key}/")
            .app_data(form_limit)
            .route(web::get().to(signup::show))
            .route(web::post().to(signup::submit)),
    );
}

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole page: `title` (already plain text) and `body` (already HTML).
pub fn page(status: StatusCode, title: &str, body: &str) -> HttpResponse {
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n",
        title = escape(title),
    );
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"))
        .insert_header(("Referrer-Policy", "same-origin"))
        .body(html)
}

/// A page that only says something (an error, a result).
pub fn message_page(status: StatusCode, title: &str, paragraphs: &[String]) -> HttpResponse {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    page(status, title, &format!("<h1>{}</h1>\n{body}", escape(title)))
}

/// A new anti-forgery token and the cookie that carries it.
pub fn new_csrf_token(secure: bool) -> (String, Cookie<'static>) {
    let token = random_alphanumeric(32);
    let cookie = Cookie::build(CSRF_COOKIE, token.clone())
        .path("/")
        .http_only(true)
        .secure(secure)
        .same_site(SameSite::Strict)
        .finish();
    (token, cookie)
}

/// Whether a form submission comes from a page of this server: its `Origin` (when sent)
/// names the request's own host, and its token matches the cookie.
pub fn csrf_ok(req: &HttpRequest, form_token: Option<&str>) -> bool {
    if let Some(origin) = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let host = crate::http::auth::request_host(req);
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

const STYLE: &str = "body{font-family:system-ui,sans-serif;line-height:1.5;margin:0;background:#f5f5f5;color:#1a1a1a}\
main{max-width:28rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px}\
h1{font-size:1.5rem;margin-top:0}label{display:block;font-weight:600;margin-top:1rem}\
input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem;border:1px solid #767676;border-radius:4px}\
input:focus{outline:3px solid #0b5cad;outline-offset:1px}.hint{color:#4a4a4a;font-size:.9rem;margin:.25rem 0 0}\
.error{color:#b00020;font-weight:600;margin:.25rem 0 0}[role=alert]{border:2px solid #b00020;padding:.5rem 1rem;border-radius:4px}\
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem;background:#0b5cad;color:#fff;border:0;border-radius:4px}\
code{background:#eee;padding:.1rem .3rem;border-radius:3px}";
