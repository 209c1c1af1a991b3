//! The API's routes. Each resource lists its methods once, each behind its gate (for
//! authenticated users unless declared public); any other method gets Zulip's 405 with
//! `allowed_methods`, OPTIONS gets 204 with `Allow`, HEAD is served by GET, and unknown
//! paths get a JSON 404.

mod auth;
mod bots;
mod calls;
mod channels;
mod drafts;
mod emoji;
mod events;
mod exports;
mod folders;
mod groups;
mod invites;
mod linkifiers;
mod messages;
mod personal;
mod playgrounds;
mod presence;
mod profile_fields;
mod push;
mod scheduled;
mod server;
mod settings;
mod topics;
pub(crate) mod uploads;
mod users;
mod webhooks;
mod widgets;

use actix_web::http::{header, Method};
use actix_web::middleware::from_fn;
use actix_web::{web, FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder, Route};
use agora_actors::ApiError;

use super::gate::{self, Gate};
use super::response::error_response;

/// Registers every API route under `/api/v1` (API keys) and `/json` (the browser's
/// session, see `http::session`).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(api_scope("/api/v1")).service(api_scope("/json"));
    emoji::static_files(cfg);
    super::pages::configure(cfg);
    super::files::configure(cfg);
}

/// Every API route, under `prefix`.
fn api_scope(prefix: &str) -> actix_web::Scope {
    let scope = web::scope(prefix)
        .service(Endpoint::new("/server_settings").public(Method::GET, server::server_settings).build())
        .service(Endpoint::new("/fetch_api_key").public(Method::POST, auth::fetch_api_key).build())
        .service(Endpoint::new("/register").route(Method::POST, events::register).build())
        .service(
            Endpoint::new("/events")
                .route(Method::GET, events::get_events)
                .route(Method::DELETE, events::delete_queue)
                .build(),
        );
    // Each area adds its own resources. Order matters only where a literal path and a
    // `{param}` path could both match: literal ones are registered first within an area.
    let scope = profile_fields::routes(scope);
    let scope = settings::routes(scope);
    let scope = groups::routes(scope);
    let scope = folders::routes(scope);
    let scope = topics::routes(scope);
    let scope = channels::routes(scope);
    let scope = widgets::routes(scope);
    let scope = messages::routes(scope);
    let scope = users::routes(scope);
    let scope = personal::routes(scope);
    let scope = emoji::routes(scope);
    let scope = presence::routes(scope);
    let scope = drafts::routes(scope);
    let scope = scheduled::routes(scope);
    let scope = push::routes(scope);
    let scope = invites::routes(scope);
    let scope = uploads::routes(scope);
    let scope = linkifiers::routes(scope);
    let scope = playgrounds::routes(scope);
    let scope = bots::routes(scope);
    let scope = exports::routes(scope);
    let scope = calls::routes(scope);
    webhooks::routes(scope)
}

thread_local! {
    /// The routes being listed by [`manifest`], as (method, path); `None` otherwise.
    static LISTING: std::cell::RefCell<Option<Vec<(String, String)>>> = const { std::cell::RefCell::new(None) };
}

/// Notes a route's methods (HEAD aside, served with GET) while [`manifest`] lists the routes;
/// nothing otherwise. Every resource outside the API's scope is made through here.
pub(crate) fn listed(methods: &[&str], path: &str) -> Resource {
    LISTING.with(|listing| {
        if let Some(list) = listing.borrow_mut().as_mut() {
            list.extend(methods.iter().map(|m| ((*m).to_owned(), path.to_owned())));
        }
    });
    web::resource(path)
}

/// A route's path as documented: `{name}` for each parameter, without its pattern.
fn documented(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '{' {
            continue;
        }
        // The name, then its pattern (if any) left out up to the closing brace.
        let mut in_pattern = false;
        for c in chars.by_ref() {
            if c == '}' {
                out.push('}');
                break;
            }
            if c == ':' {
                in_pattern = true;
            }
            if !in_pattern {
                out.push(c);
            }
        }
    }
    out
}

/// Routes as (method, path) pairs, the path with `{name}` parameters.
pub type RouteList = Vec<(String, String)>;

/// Every route the server serves: the API's under `/api/v1` (each also under `/json`), then
/// the rest (pages, files). What `docs/api.md` must list, and nothing else.
pub fn manifest() -> (RouteList, RouteList) {
    let take = |build: &dyn Fn()| {
        LISTING.with(|listing| *listing.borrow_mut() = Some(Vec::new()));
        build();
        let mut list: RouteList = LISTING
            .with(|listing| listing.borrow_mut().take())
            .unwrap_or_default()
            .into_iter()
            .map(|(method, path)| (method, documented(&path)))
            .collect();
        list.sort();
        list.dedup();
        list
    };
    let api = take(&|| {
        let _ = api_scope("/api/v1");
    });
    let other = take(&|| {
        let _ = actix_web::App::new().configure(|cfg| {
            emoji::static_files(cfg);
            super::pages::configure(cfg);
            super::files::configure(cfg);
        });
    });
    (api, other)
}

/// A numeric path id (the route's pattern allows digits only); an id too large for any
/// object names none.
fn path_id(raw: &str) -> i64 {
    raw.parse().unwrap_or(-1)
}

/// The JSON 404 for any path no route serves.
pub async fn not_found() -> HttpResponse {
    error_response(&ApiError::not_found())
}

/// A resource and the methods it serves.
struct Endpoint {
    resource: Resource,
    path: String,
    methods: Vec<Method>,
}

impl Endpoint {
    fn new(path: &str) -> Self {
        Endpoint { resource: web::resource(path), path: path.to_owned(), methods: Vec::new() }
    }

    /// Serves `method` with `handler` for authenticated users (and HEAD too, for GET).
    fn route<F, Args>(self, method: Method, handler: F) -> Self
    where
        F: Handler<Args> + Clone,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.route_with(Gate::USER, method, handler)
    }

    /// Serves `method` with `handler` for anyone (and HEAD too, for GET).
    fn public<F, Args>(self, method: Method, handler: F) -> Self
    where
        F: Handler<Args> + Clone,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.route_with(Gate::ANYONE, method, handler)
    }

    /// Serves `method` with `handler` behind `gate`: who may call it and how large its body
    /// may be (uploads name their own body limit here).
    fn route_with<F, Args>(mut self, gate: Gate, method: Method, handler: F) -> Self
    where
        F: Handler<Args> + Clone,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        let guarded = |route: Route| route.wrap(from_fn(move |req, next| gate::guard(gate, req, next)));
        if method == Method::GET {
            self.resource = self.resource.route(guarded(web::head().to(handler.clone())));
        }
        self.resource = self.resource.route(guarded(web::method(method.clone()).to(handler)));
        self.methods.push(method);
        self
    }

    /// The resource, answering other methods with 405 (or 204 for OPTIONS).
    fn build(self) -> Resource {
        let allowed: Vec<String> = self.methods.iter().map(|m| m.as_str().to_owned()).collect();
        let names: Vec<&str> = allowed.iter().map(String::as_str).collect();
        let _ = listed(&names, &self.path);
        self.resource.default_service(web::to(move |req: HttpRequest| {
            let allowed = allowed.clone();
            async move {
                if req.method() == Method::OPTIONS {
                    return HttpResponse::NoContent().insert_header((header::ALLOW, allowed.join(", "))).finish();
                }
                let names: Vec<&str> = allowed.iter().map(String::as_str).collect();
                error_response(&ApiError::method_not_allowed(&names))
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn documented_paths_name_their_parameters_without_patterns() {
        assert_eq!(super::documented(r"/messages/{message_id:\d+}/reactions"), "/messages/{message_id}/reactions");
        assert_eq!(super::documented(r"/user_uploads/{realm_id:\d+}/{path:.+}"), "/user_uploads/{realm_id}/{path}");
        assert_eq!(super::documented("/users/me"), "/users/me");
    }
}
