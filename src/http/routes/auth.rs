//! `POST /fetch_api_key`: trade an email and password for the API key.

use std::time::Instant;

use actix_web::web;
use serde_json::json;

use crate::http::auth::Site;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;
use agora_actors::json_object;
use agora_actors::realm::users::RecordLogin;

pub async fn fetch_api_key(site: Site, state: web::Data<AppState>, params: Params) -> Result<Success, HttpError> {
    let username = params.required_str("username")?;
    let password = params.required_str("password")?;
    // Zulip checks the parameters before the organization.
    let realm = site.realm()?;
    let pending = state.logins.begin(&realm.auth(), &username, Instant::now())?;
    // argon2 runs on the hashing pool, never on an async worker.
    let (pending, verified) = state
        .hashing
        .run(move || {
            let verified = pending.verify(&password);
            (pending, verified)
        })
        .await?;
    let creds = state.logins.finish(&realm.auth(), pending, verified)?;
    // The first login of an imported stub or an API-made account (FL 433, 475).
    realm.addr.send(RecordLogin { user_id: creds.user_id }).await??;
    Ok(params.success(json_object(json!({
        "api_key": creds.api_key,
        "email": creds.email,
        "user_id": creds.user_id,
    }))))
}
