//! The event system: `POST /register`, `GET /events` (long-poll) and `DELETE /events`.

use std::collections::BTreeSet;

use actix_web::http::header;
use actix_web::HttpRequest;
use agora_actors::config::IdleTimeout;
use agora_actors::queue::actor::CloseQueue;
use agora_actors::queue::{ClientCapabilities, NarrowTerm, Poll, PollOutcome, PollReply, QueueEntry, QueueSpec};
use agora_actors::realm::channels::IncludeSubscribers;
use agora_actors::realm::register::{AllocateQueue, FetchOptions, Register};
use agora_actors::registry::RealmHandle;
use agora_actors::{server_info, ApiError};
use serde_json::Value;

use crate::http::auth::Authed;
use crate::http::decode;
use crate::http::params::Params;
use crate::http::response::{HttpError, Success};
use crate::http::state::AppState;

/// `POST /register`.
pub async fn register(
    auth: Authed,
    params: Params,
    req: HttpRequest,
    state: actix_web::web::Data<AppState>,
) -> Result<Success, HttpError> {
    let mut spec = queue_spec(&params, &req, &state, "queue_lifespan_secs")?;
    if let Some(timeout) = params.decode("idle_queue_timeout", idle_queue_timeout)? {
        spec.timeout_ms = state.config.queues.idle_timeout(timeout).as_millis() as u64;
    }
    spec.client_gravatar = params.bool_aliased("client_external_avatar", "client_gravatar", true)?;
    if let Some(obj) = params.decode("client_capabilities", decode::object)? {
        spec.capabilities = ClientCapabilities::from_object(&obj)?;
    }
    let fetch_event_types: Option<BTreeSet<String>> =
        params.decode("fetch_event_types", decode::string_list)?.map(|v| v.into_iter().collect());
    let fetch = FetchOptions {
        // Zulip: the initial state follows `event_types` unless told otherwise.
        fetch_event_types: fetch_event_types.or_else(|| spec.event_types.clone()),
        include_subscribers: params.decode("include_subscribers", include_subscribers)?.unwrap_or_default(),
        presence_history_limit_days: params.int("presence_history_limit_days")?,
    };
    let snapshot = auth.realm.addr.send(Register { user_id: auth.user.user_id, spec, fetch }).await??;
    Ok(params.success_parts(snapshot))
}

/// The capabilities `GET /events` takes as parameters of their own when it creates a queue.
const EVENTS_CAPABILITIES: [&str; 9] = [
    "bulk_message_deletion",
    "stream_typing_notifications",
    "user_settings_object",
    "linkifier_url_template",
    "user_list_incomplete",
    "include_deactivated_groups",
    "archived_channels",
    "empty_topic_name",
    "simplified_presence_events",
];

/// What `POST /register` and a queue-creating `GET /events` read alike. The queue's
/// lifespan goes by `lifespan_param` (the two endpoints name it differently).
fn queue_spec(
    params: &Params,
    req: &HttpRequest,
    state: &AppState,
    lifespan_param: &str,
) -> Result<QueueSpec, ApiError> {
    let lifespan = params.int(lifespan_param)?.unwrap_or(0);
    let mut spec = QueueSpec::new(state.config.queues.timeout_for(lifespan));
    spec.apply_markdown = params.bool_or("apply_markdown", false)?;
    spec.slim_presence = params.bool_or("slim_presence", false)?;
    spec.all_public_streams = params.bool_or("all_public_streams", false)?;
    spec.event_types = params.decode("event_types", decode::string_list)?.map(|v| v.into_iter().collect());
    spec.narrow = params.decode("narrow", narrow)?.unwrap_or_default();
    let agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("");
    spec.client_name = server_info::client_name(agent).chars().take(64).collect();
    Ok(spec)
}

/// `narrow`: a JSON list of `[operator, operand]` string pairs.
fn narrow(name: &str, raw: &str) -> Result<Vec<NarrowTerm>, ApiError> {
    decode::list(name, raw)?
        .into_iter()
        .enumerate()
        .map(|(i, term)| {
            let Value::Array(pair) = term else {
                return Err(ApiError::bad_request(format!("{name}[{i}] is not a list")));
            };
            if pair.len() != 2 {
                return Err(ApiError::bad_request(format!("{name}[{i}] should have exactly 2 items")));
            }
            let part = |j: usize| {
                pair[j]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ApiError::bad_request(format!("{name}[{i}][{j}] is not a string")))
            };
            Ok(NarrowTerm { operator: part(0)?, operand: part(1)? })
        })
        .collect()
}

/// `idle_queue_timeout` (Zulip, feature level 481): how long the queue may go unpolled,
/// in seconds, or `"mobile"` (quoted, or bare as the Python client sends strings) for the
/// mobile apps' 12 hours. It overrides the older `queue_lifespan_secs`.
fn idle_queue_timeout(name: &str, raw: &str) -> Result<IdleTimeout, ApiError> {
    match raw.trim() {
        "mobile" | "\"mobile\"" => Ok(IdleTimeout::Mobile),
        other => match other.parse::<i64>() {
            Ok(secs) if secs > 0 => Ok(IdleTimeout::Seconds(secs)),
            _ => Err(ApiError::bad_request(format!("Invalid {name}"))),
        },
    }
}

/// `include_subscribers`: a JSON boolean or `"partial"` (quoted or, as the Python client
/// sends strings, bare).
pub(super) fn include_subscribers(name: &str, raw: &str) -> Result<IncludeSubscribers, ApiError> {
    match raw.trim() {
        "true" => Ok(IncludeSubscribers::Yes),
        "false" => Ok(IncludeSubscribers::No),
        "partial" | "\"partial\"" => Ok(IncludeSubscribers::Partial),
        _ => Err(ApiError::bad_request(format!("Invalid {name}"))),
    }
}

/// The queue `queue_id` if it exists and belongs to the requester; Zulip gives the same
/// error for both cases.
fn owned_queue(realm: &RealmHandle, auth: &Authed, queue_id: &str) -> Result<QueueEntry, ApiError> {
    match realm.queues.get(queue_id) {
        Some(entry) if entry.user_id == auth.user.user_id => Ok(entry),
        Some(_) => {
            tracing::warn!(user.id = %auth.user.user_id, queue.id = queue_id, "user not authorized for queue");
            Err(ApiError::bad_event_queue_id(queue_id))
        }
        None => Err(ApiError::bad_event_queue_id(queue_id)),
    }
}

/// A queue that stopped answering: saved for a restart (503, retried by clients), or gone.
fn queue_lost(realm: &RealmHandle, queue_id: &str) -> ApiError {
    if realm.queues.is_closing() {
        ApiError::unavailable()
    } else {
        ApiError::bad_event_queue_id(queue_id)
    }
}

/// `GET /events`: the queue's events after `last_event_id`, waiting for one if there are
/// none (unless `dont_block`).
pub async fn get_events(
    auth: Authed,
    params: Params,
    req: HttpRequest,
    state: actix_web::web::Data<AppState>,
) -> Result<Success, HttpError> {
    let queue_id = params.str("queue_id");
    let last_event_id = params.int("last_event_id")?;
    let dont_block = params.bool_or("dont_block", false)?;
    // Zulip reads these to create a queue when no `queue_id` is given.
    let mut spec = queue_spec(&params, &req, &state, "lifespan_secs")?;
    spec.client_gravatar = params.bool_or("client_gravatar", false)?;
    for name in EVENTS_CAPABILITIES {
        let flag = params.bool_or(name, false)?;
        if let Some(slot) = spec.capabilities.flag_mut(name) {
            *slot = flag;
        }
    }

    let realm = &auth.realm;
    let (queue_id, poll) = match queue_id {
        None if dont_block => {
            let id = realm.addr.send(AllocateQueue { user_id: auth.user.user_id, spec }).await??;
            (id, Poll { last_event_id: -1, dont_block: true, new_queue: true })
        }
        None => return Err(ApiError::bad_request("Missing 'queue_id' argument").into()),
        Some(id) => {
            let last_event_id =
                last_event_id.ok_or_else(|| ApiError::bad_request("Missing 'last_event_id' argument"))?;
            (id, Poll { last_event_id, dont_block, new_queue: false })
        }
    };
    let entry = owned_queue(realm, &auth, &queue_id)?;
    // Straight on the queue's shared state: no hop through an actor.
    let reply = match entry.queue.poll(poll) {
        None => return Err(queue_lost(realm, &queue_id).into()),
        Some(outcome) => match outcome? {
            PollOutcome::Ready(reply) => reply,
            // If the client goes away meanwhile this future is dropped; its events stay
            // queued until a poll acknowledges them.
            PollOutcome::Waiting(waiting) => {
                let _counted = realm.queues.poll_waiting();
                waiting.reply().await.map_err(|_| queue_lost(realm, &queue_id))?
            }
        },
    };
    metrics::counter!("agora_events_delivered_total").increment(reply.events.len() as u64);
    // One event or a few, as most replies carry, are not worth compressing; a backlog is.
    Ok(params.success_fields(&render_events(&reply)).gzip_from(crate::http::compress::MIN_EVENTS_BYTES))
}

/// `"events":[...]` and, when the reply names it, `"queue_id":"..."`. Each event's JSON is
/// made once and shared by every queue that delivers it.
fn render_events(reply: &PollReply) -> String {
    let mut out = String::with_capacity(64 + reply.events.iter().map(|q| q.event.json().len() + 12).sum::<usize>());
    out.push_str(r#""events":["#);
    for (i, queued) in reply.events.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        queued.event.write_with_id(queued.id, &mut out);
    }
    out.push(']');
    if let Some(queue_id) = &reply.queue_id {
        out.push_str(r#","queue_id":"#);
        out.push_str(&Value::from(&**queue_id).to_string());
    }
    out
}

/// `DELETE /events`: removes a queue; a poll waiting on it gets what it holds.
pub async fn delete_queue(auth: Authed, params: Params) -> Result<Success, HttpError> {
    let queue_id = params.required_str("queue_id")?;
    let entry = owned_queue(&auth.realm, &auth, &queue_id)?;
    entry.addr.send(CloseQueue).await.map_err(|_| queue_lost(&auth.realm, &queue_id))?;
    Ok(params.ok())
}
