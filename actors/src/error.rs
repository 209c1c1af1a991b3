//! The one domain error type: everything a client can be told, in Zulip's terms.
//!
//! An [`ApiError`] carries Zulip's error `code`, the HTTP status Zulip uses for it, the
//! translated-in-English `msg` and any extra fields of the JSON envelope (`var_name`,
//! `queue_id`, ...). The HTTP crate renders it once; nothing here knows about HTTP
//! frameworks.

use serde_json::{Map, Value};

/// Zulip's `ErrorCode` names (zerver/lib/exceptions.py), as sent in the `code` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    BadRequest,
    RequestVariableMissing,
    RequestConfusingVar,
    InvalidJson,
    BadNarrow,
    CannotDeactivateLastUser,
    StreamDoesNotExist,
    UnauthorizedPrincipal,
    BadEventQueueId,
    NonexistentSubdomain,
    RateLimitHit,
    UserDeactivated,
    RealmDeactivated,
    InvalidApiKey,
    PasswordAuthDisabled,
    PasswordResetRequired,
    AuthenticationFailed,
    Unauthorized,
    CannotDeactivateGroupInUse,
    ChannelAlreadyExists,
    PushServiceNotConfigured,
    InvalidPushDeviceToken,
    NoActivePushDevice,
    InvitationFailed,
    NotFound,
    ExpectationMismatch,
    ReactionAlreadyExists,
    ReactionDoesNotExist,
    StreamWildcardMentionNotAllowed,
    TopicWildcardMentionNotAllowed,
    MoveMessagesTimeLimitExceeded,
    RequestTimeout,
    ServerNotReady,
    BadImage,
    CsrfFailed,
}

impl ErrorCode {
    /// The wire name of the code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "BAD_REQUEST",
            ErrorCode::RequestVariableMissing => "REQUEST_VARIABLE_MISSING",
            ErrorCode::RequestConfusingVar => "REQUEST_CONFUSING_VAR",
            ErrorCode::InvalidJson => "INVALID_JSON",
            ErrorCode::BadNarrow => "BAD_NARROW",
            ErrorCode::CannotDeactivateLastUser => "CANNOT_DEACTIVATE_LAST_USER",
            ErrorCode::StreamDoesNotExist => "STREAM_DOES_NOT_EXIST",
            ErrorCode::UnauthorizedPrincipal => "UNAUTHORIZED_PRINCIPAL",
            ErrorCode::BadEventQueueId => "BAD_EVENT_QUEUE_ID",
            ErrorCode::NonexistentSubdomain => "NONEXISTENT_SUBDOMAIN",
            ErrorCode::RateLimitHit => "RATE_LIMIT_HIT",
            ErrorCode::UserDeactivated => "USER_DEACTIVATED",
            ErrorCode::RealmDeactivated => "REALM_DEACTIVATED",
            ErrorCode::InvalidApiKey => "INVALID_API_KEY",
            ErrorCode::PasswordAuthDisabled => "PASSWORD_AUTH_DISABLED",
            ErrorCode::PasswordResetRequired => "PASSWORD_RESET_REQUIRED",
            ErrorCode::AuthenticationFailed => "AUTHENTICATION_FAILED",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::CannotDeactivateGroupInUse => "CANNOT_DEACTIVATE_GROUP_IN_USE",
            ErrorCode::ChannelAlreadyExists => "CHANNEL_ALREADY_EXISTS",
            ErrorCode::PushServiceNotConfigured => "PUSH_SERVICE_NOT_CONFIGURED",
            ErrorCode::InvalidPushDeviceToken => "INVALID_PUSH_DEVICE_TOKEN",
            ErrorCode::NoActivePushDevice => "NO_ACTIVE_PUSH_DEVICE",
            ErrorCode::InvitationFailed => "INVITATION_FAILED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::ExpectationMismatch => "EXPECTATION_MISMATCH",
            ErrorCode::ReactionAlreadyExists => "REACTION_ALREADY_EXISTS",
            ErrorCode::ReactionDoesNotExist => "REACTION_DOES_NOT_EXIST",
            ErrorCode::StreamWildcardMentionNotAllowed => "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
            ErrorCode::TopicWildcardMentionNotAllowed => "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
            ErrorCode::MoveMessagesTimeLimitExceeded => "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
            ErrorCode::RequestTimeout => "REQUEST_TIMEOUT",
            ErrorCode::ServerNotReady => "SERVER_NOT_READY",
            ErrorCode::BadImage => "BAD_IMAGE",
            ErrorCode::CsrfFailed => "CSRF_FAILED",
        }
    }
}

/// An error as a Zulip client sees it: `{"result":"error","msg",["code"],...data}` with
/// `status` as the HTTP status.
///
/// `code` is `None` only for the two envelopes Zulip sends without one: 405 and 500.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: Option<ErrorCode>,
    pub status: u16,
    pub msg: String,
    /// Extra top-level fields of the error body, in insertion order.
    pub data: Map<String, Value>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status, self.code.map_or("-", ErrorCode::as_str), self.msg)
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// An error with the given code, status and message and no extra fields.
    pub fn new(code: ErrorCode, status: u16, msg: impl Into<String>) -> Self {
        ApiError { code: Some(code), status, msg: msg.into(), data: Map::new() }
    }

    /// Adds an extra field to the body.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Zulip's default `JsonableError`: 400 `BAD_REQUEST`.
    pub fn bad_request(msg: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, 400, msg)
    }

    /// `ResourceNotFoundError`: 404 that keeps the `BAD_REQUEST` code.
    pub fn resource_not_found(msg: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, 404, msg)
    }

    /// Zulip's `ValidationFailureError` of a Django `full_clean`: `errors` as `(field, message)`
    /// in Django's order (`__all__` for the model's own checks); the first message is the
    /// error's, and every message is listed by field in `errors`. `None` when there is none.
    pub fn validation_failure(errors: &[(&str, String)]) -> Option<Self> {
        let (_, first) = errors.first()?;
        let mut by_field: Map<String, Value> = Map::new();
        for (field, message) in errors {
            match by_field.get_mut(*field) {
                Some(Value::Array(list)) => list.push(Value::from(message.as_str())),
                _ => {
                    by_field.insert((*field).to_owned(), Value::Array(vec![Value::from(message.as_str())]));
                }
            }
        }
        Some(Self::bad_request(first.clone()).with("errors", Value::Object(by_field)))
    }

    /// A required parameter is absent.
    pub fn missing_argument(var_name: &str) -> Self {
        Self::new(ErrorCode::RequestVariableMissing, 400, format!("Missing '{var_name}' argument"))
            .with("var_name", var_name)
    }

    /// Failed API authentication: 401 `UNAUTHORIZED` (the HTTP layer adds
    /// `WWW-Authenticate: Basic realm="zulip"`).
    pub fn unauthorized(msg: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unauthorized, 401, msg)
    }

    /// No credentials at all on a route that needs them.
    pub fn not_logged_in() -> Self {
        Self::unauthorized("Not logged in: API authentication or user session required")
    }

    /// The request's host names no organization.
    pub fn invalid_subdomain() -> Self {
        Self::new(ErrorCode::NonexistentSubdomain, 404, "Invalid subdomain")
    }

    /// Too many requests; `retry_after` in seconds.
    pub fn rate_limited(retry_after: f64) -> Self {
        Self::new(ErrorCode::RateLimitHit, 429, "API usage exceeded rate limit").with("retry-after", retry_after)
    }

    /// A parameter outside its list of allowed values, as Zulip's `check_int_in_validator`
    /// words it.
    pub fn not_in_list(name: &str) -> Self {
        Self::bad_request(format!("Invalid {name}: Value error, Not in the list of possible values"))
    }

    /// Zulip's parameter length check (`StringConstraints(max_length=...)`): `value` of
    /// parameter `name` is at most `max` characters.
    pub fn check_length(name: &str, value: &str, max: usize) -> Result<(), Self> {
        if value.chars().count() > max {
            return Err(Self::bad_request(format!("{name} is too long (limit: {max} characters)")));
        }
        Ok(())
    }

    /// The caller lacks the organization administrator role.
    pub fn must_be_admin() -> Self {
        Self::new(ErrorCode::UnauthorizedPrincipal, 400, "Must be an organization administrator")
    }

    /// The caller lacks the organization owner role.
    pub fn must_be_owner() -> Self {
        Self::new(ErrorCode::UnauthorizedPrincipal, 400, "Must be an organization owner")
    }

    /// The caller is a bot on a humans-only endpoint.
    pub fn humans_only() -> Self {
        Self::bad_request("This endpoint does not accept bot requests.")
    }

    /// A user who is no bot on a bots-only endpoint (`/bot_storage` since feature level 494).
    pub fn bots_only() -> Self {
        Self::bad_request("Must be a bot user")
    }

    /// An unknown path under the API root.
    pub fn not_found() -> Self {
        Self::new(ErrorCode::NotFound, 404, "Not Found")
    }

    /// A method the route does not serve; Zulip's 405 body has no `code`.
    pub fn method_not_allowed(allowed: &[&str]) -> Self {
        ApiError { code: None, status: 405, msg: "Method Not Allowed".to_owned(), data: Map::new() }
            .with("allowed_methods", allowed.to_vec())
    }

    /// Anything unexpected. The cause must already be logged by the caller: nothing of it
    /// reaches the client.
    pub fn internal() -> Self {
        ApiError { code: None, status: 500, msg: "Internal server error".to_owned(), data: Map::new() }
    }

    /// The server is stopping (for a restart): 503, which Zulip clients retry.
    ///
    /// The code is Zulip's `SERVER_NOT_READY`, which its `ServerNotReadyError` carries when
    /// the server cannot serve yet (its health check). Zulip itself answers a restart from
    /// nginx, without an envelope; the status stays 503 (not that error's 500) because a
    /// 503 is what clients retry.
    pub fn unavailable() -> Self {
        Self::new(ErrorCode::ServerNotReady, 503, "The server is restarting; please try again.")
    }

    /// `BAD_EVENT_QUEUE_ID`: the queue is unknown, gone or someone else's.
    pub fn bad_event_queue_id(queue_id: &str) -> Self {
        ApiError::new(ErrorCode::BadEventQueueId, 400, format!("Bad event queue ID: {queue_id}"))
            .with("queue_id", queue_id)
    }
}

/// The result type of every domain operation.
pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_argument_names_the_variable() {
        let e = ApiError::missing_argument("content");
        assert_eq!(e.msg, "Missing 'content' argument");
        assert_eq!(e.code, Some(ErrorCode::RequestVariableMissing));
        assert_eq!(e.data.get("var_name"), Some(&Value::from("content")));
        assert_eq!(e.status, 400);
    }

    #[test]
    fn method_not_allowed_has_no_code() {
        let e = ApiError::method_not_allowed(&["GET", "PATCH"]);
        assert_eq!(e.code, None);
        assert_eq!(e.status, 405);
        assert_eq!(e.data.get("allowed_methods"), Some(&serde_json::json!(["GET", "PATCH"])));
    }
}
