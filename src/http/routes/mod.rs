//! The API's routes. Each resource lists its methods once; any other method gets Zulip's
//! 405 with `allowed_methods`, OPTIONS gets 204 with `Allow`, HEAD is served by GET, and
//! unknown paths get a JSON 404.

mod auth;
mod events;
mod server;
mod users;

use actix_web::http::{header, Method};
use actix_web::{web, FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder};
use agora_actors::ApiError;

use super::response::error_response;

/// Registers every API route under `/api/v1`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/v1")
            .service(Endpoint::new("/server_settings").route(Method::GET, server::server_settings).build())
            .service(Endpoint::new("/fetch_api_key").route(Method::POST, auth::fetch_api_key).build())
            .service(Endpoint::new("/users").route(Method::POST, users::create_user).build())
            .service(Endpoint::new("/users/me").route(Method::GET, users::get_own_profile).build())
            .service(
                Endpoint::new("/users/me/api_key/regenerate").route(Method::POST, users::regenerate_api_key).build(),
            )
            .service(Endpoint::new("/users/{user}").route(Method::GET, users::get_user).build())
            .service(Endpoint::new("/register").route(Method::POST, events::register).build())
            .service(
                Endpoint::new("/events")
                    .route(Method::GET, events::get_events)
                    .route(Method::DELETE, events::delete_queue)
                    .build(),
            ),
    );
}

/// The JSON 404 for any path no route serves.
pub async fn not_found() -> HttpResponse {
    error_response(&ApiError::not_found())
}

/// A resource and the methods it serves.
struct Endpoint {
    resource: Resource,
    methods: Vec<Method>,
}

impl Endpoint {
    fn new(path: &str) -> Self {
        Endpoint { resource: web::resource(path), methods: Vec::new() }
    }

    /// Serves `method` with `handler` (and HEAD with it too, for GET).
    fn route<F, Args>(mut self, method: Method, handler: F) -> Self
    where
        F: Handler<Args> + Clone,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        if method == Method::GET {
            self.resource = self.resource.route(web::head().to(handler.clone()));
        }
        self.resource = self.resource.route(web::method(method.clone()).to(handler));
        self.methods.push(method);
        self
    }

    /// The resource, answering other methods with 405 (or 204 for OPTIONS).
    fn build(self) -> Resource {
        let allowed: Vec<String> = self.methods.iter().map(|m| m.as_str().to_owned()).collect();
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
