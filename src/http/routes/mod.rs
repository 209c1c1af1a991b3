//! The API's routes. Each resource lists its methods once; any other method gets Zulip's
//! 405 with `allowed_methods`, OPTIONS gets 204 with `Allow`, HEAD is served by GET, and
//! unknown paths get a JSON 404.

mod auth;
mod server;
mod users;

use actix_web::http::{header, Method};
use actix_web::{web, FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder};
use agora_actors::ApiError;
use serde_json::{Map, Value};

use super::response::error_response;

/// Registers every API route under `/api/v1`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/v1")
            .service(Endpoint::new("/server_settings").get(server::server_settings).build())
            .service(Endpoint::new("/fetch_api_key").post(auth::fetch_api_key).build())
            .service(Endpoint::new("/users/me").get(users::get_own_profile).build())
            .service(Endpoint::new("/users/me/api_key/regenerate").post(users::regenerate_api_key).build())
            .service(Endpoint::new("/users/{user}").get(users::get_user).build()),
    );
}

/// The JSON 404 for any path no route serves.
pub async fn not_found() -> HttpResponse {
    error_response(&ApiError::not_found())
}

/// A resource and the methods it serves.
struct Endpoint {
    resource: Resource,
    methods: Vec<&'static str>,
}

impl Endpoint {
    fn new(path: &str) -> Self {
        Endpoint { resource: web::resource(path), methods: Vec::new() }
    }

    fn route<F, Args>(mut self, method: Method, handler: F) -> Self
    where
        F: Handler<Args> + Clone,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        if method == Method::GET {
            self.resource = self.resource.route(web::head().to(handler.clone()));
        }
        self.methods.push(match method {
            Method::GET => "GET",
            Method::POST => "POST",
            Method::PATCH => "PATCH",
            Method::PUT => "PUT",
            _ => "DELETE",
        });
        self.resource = self.resource.route(web::method(method).to(handler));
        self
    }

    fn get<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args> + Clone,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.route(Method::GET, handler)
    }

    fn post<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args> + Clone,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.route(Method::POST, handler)
    }

    fn build(self) -> Resource {
        let methods = self.methods;
        self.resource.default_service(web::to(move |req: HttpRequest| {
            let methods = methods.clone();
            async move {
                if req.method() == Method::OPTIONS {
                    return HttpResponse::NoContent().insert_header((header::ALLOW, methods.join(", "))).finish();
                }
                error_response(&ApiError::method_not_allowed(&methods))
            }
        }))
    }
}

/// The object inside a `json!({...})` literal.
fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
