//! `POST /fetch_api_key`: trade an email and password for the API key.

use std::time::Instant;

use actix_web::web;
use serde_json::json;

use super::object;
use crate::http::auth::Realm;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;

pub async fn fetch_api_key(realm: Realm, state: web::Data<AppState>, params: Params) -> Result<Success, HttpError> {
    let username = params.required_str("username")?;
    let password = params.required_str("password")?;
    let pending = state.logins.begin(&realm.0.auth(), &username, Instant::now())?;
    // argon2 runs on the blocking pool, never on an async worker.
    let (pending, verified) = web::block(move || {
        let verified = pending.verify(&password);
        (pending, verified)
    })
    .await?;
    let creds = state.logins.finish(pending, verified)?;
    Ok(params.success(object(json!({
        "api_key": creds.api_key,
        "email": creds.email,
        "user_id": creds.user_id,
    }))))
}
