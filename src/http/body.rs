//! Reading request bodies (urlencoded and multipart), within a size and within time.
//!
//! A route's gate ([`super::gate`]) refuses a declared `Content-Length` over the limit
//! before anything is read and leaves the route's [`BodyRules`] in the request; the body
//! is read only afterwards, once the request may be served. Here the size is enforced
//! again while streaming (chunked bodies declare none), with a deadline on the whole body
//! and on the silence between chunks, so a client that stops sending is answered instead
//! of holding its request open for ever.

use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::http::header::HeaderMap;
use actix_web::web::{Bytes, BytesMut};
use agora_actors::{ApiError, ErrorCode};
use futures_util::future::poll_fn;
use futures_util::{Stream, StreamExt};
use tokio::time::Instant;

/// How much of a body a route reads, and how long it waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyRules {
    /// Largest body, in bytes.
    pub max_bytes: usize,
    /// Longest time to receive the whole body.
    pub timeout: Duration,
    /// Longest silence between two chunks of it.
    pub idle_timeout: Duration,
}

impl Default for BodyRules {
    /// Parameters only: 1 MiB (a 10,000-character message percent-encoded is a tenth of
    /// that), 30 s for the body, 10 s of silence.
    fn default() -> Self {
        BodyRules { max_bytes: 1024 * 1024, timeout: Duration::from_secs(30), idle_timeout: Duration::from_secs(10) }
    }
}

/// Marks a request whose body was left unread or half-read: its connection is closed after
/// the reply, since what follows on it is not a request.
#[derive(Debug, Clone, Copy)]
pub struct CloseConnection;

/// 413, with the limit's message.
pub fn too_large() -> ApiError {
    ApiError { status: 413, ..ApiError::bad_request("Request body is too large") }
}

/// A body that is not what its `Content-Type` says.
pub fn malformed() -> ApiError {
    ApiError::bad_request("Malformed request body")
}

/// A body that did not arrive in time.
pub fn timed_out() -> ApiError {
    ApiError::new(ErrorCode::RequestTimeout, 400, "Timed out waiting for the request body")
}

/// A file part of a multipart body.
#[derive(Debug, Clone)]
pub struct UploadedFile {
    /// The part's field name (the Python client uses the file's path).
    pub field: String,
    pub filename: String,
    pub content_type: Option<String>,
    pub data: Bytes,
}

/// The deadlines of one body read.
struct Clock {
    deadline: Instant,
    idle: Duration,
}

impl Clock {
    fn start(rules: &BodyRules) -> Self {
        Clock { deadline: Instant::now() + rules.timeout, idle: rules.idle_timeout }
    }

    /// `next` within the idle timeout and the overall deadline.
    async fn within<T>(&self, next: impl std::future::Future<Output = T>) -> Result<T, ApiError> {
        let until = self.deadline.min(Instant::now() + self.idle);
        tokio::time::timeout_at(until, next).await.map_err(|_| timed_out())
    }
}

/// The whole body, up to `rules.max_bytes`.
pub async fn read_all(mut payload: Payload, rules: &BodyRules) -> Result<Bytes, ApiError> {
    let clock = Clock::start(rules);
    let mut body = BytesMut::new();
    while let Some(chunk) = clock.within(payload.next()).await? {
        let chunk = chunk.map_err(|_| malformed())?;
        if body.len() + chunk.len() > rules.max_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// The fields and files of a multipart body, up to `rules.max_bytes` of content.
pub async fn read_multipart(
    headers: &HeaderMap,
    payload: Payload,
    rules: &BodyRules,
) -> Result<(Vec<(String, String)>, Vec<UploadedFile>), ApiError> {
    let clock = Clock::start(rules);
    let ended = Rc::new(Cell::new(false));
    let payload = Watched { inner: payload, ended: Rc::clone(&ended) };
    let mut multipart = actix_multipart::Multipart::new(headers, payload);
    let (mut fields, mut files, mut total) = (Vec::new(), Vec::new(), 0usize);
    while let Some(mut field) = clock.within(next_part(&mut multipart, &ended)).await?? {
        let disposition = field.content_disposition().cloned();
        let name = disposition.as_ref().and_then(|d| d.get_name()).unwrap_or("").to_owned();
        let filename = disposition.as_ref().and_then(|d| d.get_filename()).map(str::to_owned);
        let content_type = field.content_type().map(|m| m.essence_str().to_owned());
        let mut data = BytesMut::new();
        while let Some(chunk) = clock.within(next_part(&mut field, &ended)).await?? {
            total += chunk.len();
            if total > rules.max_bytes {
                return Err(too_large());
            }
            data.extend_from_slice(&chunk);
        }
        match filename {
            Some(filename) => files.push(UploadedFile { field: name, filename, content_type, data: data.freeze() }),
            None => fields.push((name, String::from_utf8_lossy(&data).into_owned())),
        }
    }
    Ok((fields, files))
}

/// The next item of a multipart stream. The parser waits for more data when a body ends
/// inside a boundary, and nothing ever wakes it (actix-multipart 0.7): once the payload
/// has ended, waiting means the body is malformed.
pub(super) async fn next_part<S, T, E>(stream: &mut S, ended: &Cell<bool>) -> Result<Option<T>, ApiError>
where
    S: Stream<Item = Result<T, E>> + Unpin,
{
    poll_fn(|cx| match stream.poll_next_unpin(cx) {
        Poll::Ready(Some(Ok(item))) => Poll::Ready(Ok(Some(item))),
        Poll::Ready(Some(Err(_))) => Poll::Ready(Err(malformed())),
        Poll::Ready(None) => Poll::Ready(Ok(None)),
        Poll::Pending if ended.get() => Poll::Ready(Err(malformed())),
        Poll::Pending => Poll::Pending,
    })
    .await
}

/// A payload that notes when it has ended.
pub(super) struct Watched {
    inner: Payload,
    ended: Rc<Cell<bool>>,
}

impl Watched {
    /// `inner`, setting `ended` once it has ended.
    pub(super) fn new(inner: Payload, ended: Rc<Cell<bool>>) -> Self {
        Watched { inner, ended }
    }
}

impl Stream for Watched {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.inner.poll_next_unpin(cx);
        if let Poll::Ready(None) = next {
            self.ended.set(true);
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderValue, CONTENT_TYPE};

    /// A payload of `chunks`, ended or not, and its sender (dropping which ends it too).
    fn open(chunks: Vec<&'static [u8]>, end: bool) -> (Payload, Box<dyn std::any::Any>) {
        let (mut sender, payload) = actix_http::h1::Payload::create(false);
        for chunk in chunks {
            sender.feed_data(Bytes::from_static(chunk));
        }
        if end {
            sender.feed_eof();
        }
        (Payload::from(payload), Box::new(sender))
    }

    fn payload(chunks: Vec<&'static [u8]>) -> Payload {
        open(chunks, true).0
    }

    fn multipart_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("multipart/form-data; boundary=XX"));
        headers
    }

    fn rules(max_bytes: usize) -> BodyRules {
        BodyRules { max_bytes, timeout: Duration::from_secs(30), idle_timeout: Duration::from_secs(5) }
    }

    #[actix_web::test]
    async fn bodies_are_read_within_their_limit() {
        let body = read_all(payload(vec![b"a=1", b"&b=2"]), &rules(7)).await.unwrap();
        assert_eq!(&body[..], b"a=1&b=2");
        let err = read_all(payload(vec![b"a=1", b"&b=22"]), &rules(7)).await.unwrap_err();
        assert_eq!((err.status, err.msg.as_str()), (413, "Request body is too large"));
    }

    #[actix_web::test]
    async fn a_multipart_body_ending_inside_a_boundary_is_malformed_at_once() {
        let body: &'static [u8] = b"--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--X";
        let err = read_multipart(&multipart_headers(), payload(vec![body]), &rules(1024)).await.unwrap_err();
        assert_eq!(err, malformed());
        let body: &'static [u8] = b"--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XX--\r\n";
        let (fields, files) = read_multipart(&multipart_headers(), payload(vec![body]), &rules(1024)).await.unwrap();
        assert_eq!((fields, files.len()), (vec![("a".to_owned(), "1".to_owned())], 0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_arriving_times_out() {
        // The sender stays: more could come, and never does.
        let (stalled, _sender) = open(vec![b"a=1"], false);
        let started = Instant::now();
        let err = read_all(stalled, &rules(1024)).await.unwrap_err();
        assert_eq!(
            (err.status, err.code, started.elapsed()),
            (400, Some(ErrorCode::RequestTimeout), Duration::from_secs(5))
        );
        let body: &'static [u8] = b"--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1";
        let (stalled, _sender) = open(vec![body], false);
        let started = Instant::now();
        let err = read_multipart(&multipart_headers(), stalled, &rules(1024)).await.unwrap_err();
        assert_eq!((err, started.elapsed()), (timed_out(), Duration::from_secs(5)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_still_ends_at_the_overall_deadline() {
        let (mut sender, inner) = actix_http::h1::Payload::create(false);
        let rules =
            BodyRules { max_bytes: 1 << 20, timeout: Duration::from_secs(30), idle_timeout: Duration::from_secs(5) };
        // A byte every 4 s: never 5 s of silence.
        let feeder = async move {
            loop {
                tokio::time::sleep(Duration::from_secs(4)).await;
                sender.feed_data(Bytes::from_static(b"a"));
            }
        };
        let started = Instant::now();
        let outcome = tokio::select! {
            outcome = read_all(Payload::from(inner), &rules) => outcome,
            () = feeder => unreachable!("the feeder never stops"),
        };
        assert_eq!((outcome.unwrap_err(), started.elapsed()), (timed_out(), Duration::from_secs(30)));
    }
}
