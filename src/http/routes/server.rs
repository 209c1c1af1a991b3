//! `GET /server_settings`: no authentication.

use actix_web::http::header;
use actix_web::HttpRequest;
use agora_actors::realm::organization::GetServerSettings;
use agora_actors::server_info;

use crate::http::auth::Site;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};

pub async fn server_settings(
    req: HttpRequest,
    site: Site,
    params: Params,
    state: actix_web::web::Data<crate::http::state::AppState>,
) -> Result<Success, HttpError> {
    let user_agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("");
    let is_incompatible = server_info::is_incompatible_client(user_agent);
    let data = match site.realm_or_root()? {
        Some(realm) => realm.addr.send(GetServerSettings { is_incompatible }).await?,
        None => server_info::server_settings(is_incompatible, state.config.push.configured()),
    };
    Ok(params.success(data))
}
