//! `GET /server_settings`: no authentication.

use actix_web::http::header;
use actix_web::HttpRequest;
use agora_actors::realm::messages::GetServerSettings;
use agora_actors::server_info;

use crate::http::auth::MaybeRealm;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

pub async fn server_settings(req: HttpRequest, realm: MaybeRealm, params: Params) -> Result<Success, HttpError> {
    let user_agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("");
    let is_incompatible = server_info::is_incompatible_client(user_agent);
    let data = match realm.0 {
        Some(realm) => realm.addr.send(GetServerSettings { is_incompatible }).await?,
        None => server_info::server_settings(is_incompatible),
    };
    Ok(params.success(data))
}
