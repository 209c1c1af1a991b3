//! The jobs of test notifications: a legacy device's (`push/test_notification`, Zulip's
//! `send_test_push_notification` through the bouncer) and the end-to-end encrypted devices'
//! (`push/e2ee/notify` with Zulip's `test` payload).

use reqwest::Method;
use serde_json::{json, Value};

use super::bouncer::{Body, BouncerError};
use super::jobs::{e2ee_requests, local, registered, send_e2ee, Ctx, Outcome};
use crate::realm::push::PushDeviceOutcome;
use crate::store::client_devices::{self, ClientDevice};
use crate::store::push::Job;

/// One legacy device's test notification: the bouncer sends Zulip's test alert.
pub(super) async fn legacy(ctx: &Ctx<'_>, job: &Job) -> Result<Outcome, BouncerError> {
    let p = &job.payload;
    let body = json!({
        "realm_uuid": ctx.realm_uuid(job.realm_id),
        "user_uuid": ctx.user_uuid(job.user_id),
        "user_id": job.user_id,
        "token": p["token"],
        "token_kind": p["token_kind"],
        "base_payload": Value::Object(ctx.base_payload(job)?),
    });
    ctx.bouncer.call(Method::POST, "push/test_notification", Body::Json(&body)).await?;
    Ok(Outcome::Done)
}

/// The encrypted devices' test notification: `{realm_name, realm_url, time, type: "test",
/// user_id}`, sealed for each device still registered; devices the bouncer dropped are
/// reported.
pub(super) async fn encrypted(ctx: &Ctx<'_>, job: &Job) -> Result<Outcome, BouncerError> {
    let p = &job.payload;
    let ids: Vec<i64> =
        p.get("device_ids").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_i64).collect();
    let devices: Vec<ClientDevice> = {
        let conn = ctx.store.conn().map_err(local)?;
        client_devices::of_user(&conn, job.user_id).map_err(local)?
    };
    let chosen: Vec<&ClientDevice> = devices.iter().filter(|d| registered(d) && ids.contains(&d.id)).collect();
    if chosen.is_empty() {
        return Ok(Outcome::Done);
    }
    let realm = ctx.realm(job.realm_id)?;
    let data = json!({
        "realm_name": realm.name,
        "realm_url": ctx.config.realm_url(&realm.subdomain),
        "time": p["time"],
        "type": "test",
        "user_id": job.user_id,
    });
    let gone = send_e2ee(ctx, job, e2ee_requests(&chosen, &data, true)?).await?;
    if gone.is_empty() {
        return Ok(Outcome::Done);
    }
    Ok(Outcome::Report(PushDeviceOutcome::Removed { user_id: job.user_id, tokens: Vec::new(), token_ids: gone }))
}
