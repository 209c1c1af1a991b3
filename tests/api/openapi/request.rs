//! The tests' requests to the API: reqwest's builder, which remembers the method and path it
//! was made with, so that the JSON success it brings back is checked before the test sees it.

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Method, RequestBuilder, Response};
use serde::Serialize;

/// A request to the API, checked when it is sent.
pub struct ApiRequest {
    builder: RequestBuilder,
    method: Method,
    path: String,
}

impl ApiRequest {
    /// `builder`, made for `method` `path` (`/api/v1/...`).
    pub fn new(builder: RequestBuilder, method: Method, path: String) -> ApiRequest {
        ApiRequest { builder, method, path }
    }

    fn map(self, change: impl FnOnce(RequestBuilder) -> RequestBuilder) -> ApiRequest {
        ApiRequest { builder: change(self.builder), ..self }
    }

    pub fn header<K, V>(self, key: K, value: V) -> ApiRequest
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        self.map(|b| b.header(key, value))
    }

    pub fn basic_auth(self, username: impl std::fmt::Display, password: Option<impl std::fmt::Display>) -> ApiRequest {
        self.map(|b| b.basic_auth(username, password))
    }

    pub fn form<T: Serialize + ?Sized>(self, form: &T) -> ApiRequest {
        self.map(|b| b.form(form))
    }

    pub fn query<T: Serialize + ?Sized>(self, query: &T) -> ApiRequest {
        self.map(|b| b.query(query))
    }

    pub fn json<T: Serialize + ?Sized>(self, json: &T) -> ApiRequest {
        self.map(|b| b.json(json))
    }

    pub fn body(self, body: impl Into<reqwest::Body>) -> ApiRequest {
        self.map(|b| b.body(body))
    }

    pub fn multipart(self, form: reqwest::multipart::Form) -> ApiRequest {
        self.map(|b| b.multipart(form))
    }

    /// Sends the request; a JSON success is checked against Zulip's description before it
    /// is handed back (whole, as it came).
    pub async fn send(self) -> reqwest::Result<Response> {
        let response = self.builder.send().await?;
        checked(&self.method, &self.path, response).await
    }
}

/// A response of the tests' request `method path` (`path` as sent: `/api/v1/...`), checked
/// when it is a JSON success, and given back as it came.
async fn checked(method: &Method, path: &str, response: Response) -> reqwest::Result<Response> {
    let is_json = response.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let encoded = response.headers().contains_key("content-encoding");
    if !response.status().is_success() || !is_json || encoded || super::api_path(path).is_none() {
        return Ok(response);
    }
    let status = response.status().as_u16();
    let mut again = http::Response::builder().status(response.status()).version(response.version());
    *again.headers_mut().expect("a fresh builder") = response.headers().clone();
    *again.extensions_mut().expect("a fresh builder") = response.extensions().clone();
    let body = response.bytes().await?;
    super::check(method, path, status, &body);
    Ok(again.body(body).expect("the parts of a response").into())
}
