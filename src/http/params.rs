//! Request parameters, merged as Zulip merges them, with typed getters that remember what
//! the endpoint used.
//!
//! Zulip looks a parameter up in the form body first (for POST, PUT, PATCH and DELETE,
//! urlencoded or multipart) and then in the query string, whatever the method. Whatever the
//! endpoint never asked for is reported in `ignored_parameters_unsupported`, which
//! [`Params::success`] adds to every successful reply.

use std::cell::RefCell;
use std::collections::BTreeSet;

use actix_web::dev::Payload;
use actix_web::http::{header, Method};
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use agora_actors::{ApiError, ErrorCode};
use futures_util::future::LocalBoxFuture;
use serde_json::{Map, Value};

use super::body::{self, BodyRules, CloseConnection};
use super::decode;
use super::response::{HttpError, Success};
use super::state::AppState;

pub use super::body::UploadedFile;

/// The parameters of one request.
#[derive(Debug, Default)]
pub struct Params {
    body: Vec<(String, String)>,
    query: Vec<(String, String)>,
    files: Vec<UploadedFile>,
    /// Which pairs (body first, then query) the endpoint asked for by name.
    used: RefCell<Vec<bool>>,
}

impl Params {
    /// Parameters from a query string and form pairs (the extractor's work, for tests).
    pub fn from_parts(query: &str, body: Vec<(String, String)>) -> Self {
        Params { body, query: pairs(query.as_bytes()), ..Default::default() }
    }

    /// The raw value: the last occurrence in the body, else the last in the query string.
    /// Every occurrence of the name counts as used (no allocation: this runs for every
    /// parameter an endpoint knows, given or not).
    fn raw(&self, name: &str) -> Option<&str> {
        let mut used = self.used.borrow_mut();
        for (i, (key, _)) in self.body.iter().chain(self.query.iter()).enumerate() {
            if key == name {
                if used.len() <= i {
                    used.resize(self.body.len() + self.query.len(), false);
                }
                used[i] = true;
            }
        }
        last_value(&self.body, name).or_else(|| last_value(&self.query, name))
    }

    /// A plain string parameter (never JSON-decoded).
    pub fn str(&self, name: &str) -> Option<String> {
        self.raw(name).map(str::to_owned)
    }

    /// A required plain string parameter.
    pub fn required_str(&self, name: &str) -> Result<String, ApiError> {
        self.str(name).ok_or_else(|| ApiError::missing_argument(name))
    }

    /// An optional JSON boolean.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        self.raw(name).map(|raw| decode::boolean(name, raw)).transpose()
    }

    /// A JSON boolean with a default.
    pub fn bool_or(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        Ok(self.bool(name)?.unwrap_or(default))
    }

    /// A JSON boolean that also goes by a legacy name; giving both names is Zulip's
    /// `REQUEST_CONFUSING_VAR`.
    pub fn bool_aliased(&self, name: &str, alias: &str, default: bool) -> Result<bool, ApiError> {
        let has = |n: &str| self.body.iter().chain(self.query.iter()).any(|(k, _)| k == n);
        match (has(name), has(alias)) {
            (true, true) => {
                self.raw(name);
                self.raw(alias);
                Err(ApiError::new(
                    ErrorCode::RequestConfusingVar,
                    400,
                    format!("Can't decide between '{name}' and '{alias}' arguments"),
                )
                .with("var_name1", name)
                .with("var_name2", alias))
            }
            (false, true) => self.bool_or(alias, default),
            _ => self.bool_or(name, default),
        }
    }

    /// An optional JSON integer.
    pub fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        self.raw(name).map(|raw| decode::integer(name, raw)).transpose()
    }

    /// An optional parameter decoded by `f` (one of [`decode`]'s functions).
    pub fn decode<T>(&self, name: &str, f: fn(&str, &str) -> Result<T, ApiError>) -> Result<Option<T>, ApiError> {
        self.raw(name).map(|raw| f(name, raw)).transpose()
    }

    /// The uploaded files, in body order.
    pub fn files(&self) -> &[UploadedFile] {
        &self.files
    }

    /// Names the endpoint never asked for, sorted and without repeats.
    pub fn ignored(&self) -> Vec<String> {
        let used = self.used.borrow();
        let names: BTreeSet<&str> = self
            .body
            .iter()
            .chain(self.query.iter())
            .enumerate()
            .filter(|(i, _)| !used.get(*i).copied().unwrap_or(false))
            .map(|(_, (k, _))| k.as_str())
            .collect();
        names.into_iter().map(str::to_owned).collect()
    }

    /// A success reply with `data`, reporting the unused parameters.
    pub fn success(&self, data: Map<String, Value>) -> Success {
        Success::new(data, self.ignored())
    }

    /// A success reply whose data members are already written as JSON (`"a":1,...`).
    pub fn success_fields(&self, fields: &str) -> Success {
        Success::from_fields(fields, self.ignored())
    }

    /// A success reply around JSON members written in pieces (sent as they are).
    pub fn success_parts(&self, fields: Vec<bytes::Bytes>) -> Success {
        Success::from_parts(fields, self.ignored())
    }

    /// A success reply with no data.
    pub fn ok(&self) -> Success {
        self.success(Map::new())
    }
}

fn last_value<'a>(list: &'a [(String, String)], name: &str) -> Option<&'a str> {
    list.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// Decodes `a=1&b=2` (lossy UTF-8, `+` as space), keeping repeats in order.
fn pairs(bytes: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(bytes).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

impl FromRequest for Params {
    type Error = HttpError;
    type Future = LocalBoxFuture<'static, Result<Self, HttpError>>;

    /// Reads the body, if any, within the rules the route's gate left (the server's
    /// parameter rules for a route without one).
    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let query = pairs(req.query_string().as_bytes());
        let has_body = matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH | Method::DELETE);
        let essence = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
            .unwrap_or_default();
        let rules = req
            .extensions()
            .get::<BodyRules>()
            .copied()
            .or_else(|| req.app_data::<web::Data<AppState>>().map(|state| state.limits.params_body));
        let payload = payload.take();
        let req = req.clone();
        Box::pin(async move {
            let rules = rules.unwrap_or_default();
            let read = match essence.as_str() {
                "application/x-www-form-urlencoded" if has_body => {
                    body::read_all(payload, &rules).await.map(|bytes| (pairs(&bytes), Vec::new()))
                }
                "multipart/form-data" if has_body => body::read_multipart(req.headers(), payload, &rules).await,
                // Zulip reads no parameters from other bodies.
                _ => Ok((Vec::new(), Vec::new())),
            };
            let (body, files) = read.inspect_err(|_| {
                // What is left of the body is not a request: the connection goes.
                req.extensions_mut().insert(CloseConnection);
            })?;
            Ok(Params { body, query, files, used: RefCell::default() })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn body_wins_over_query_and_last_repeat_wins() {
        let p = Params::from_parts("a=query&b=q1&b=q2", form(&[("a", "body")]));
        assert_eq!(p.str("a").as_deref(), Some("body"));
        assert_eq!(p.str("b").as_deref(), Some("q2"));
        assert_eq!(p.str("c"), None);
    }

    #[test]
    fn unused_names_are_reported_sorted_once() {
        let p = Params::from_parts("zeta=1&alpha=2&alpha=3", form(&[("used", "x"), ("mid", "y")]));
        assert_eq!(p.str("used").as_deref(), Some("x"));
        assert_eq!(p.ignored(), vec!["alpha", "mid", "zeta"]);
        let super::super::response::Body::Object(body) = p.success(Map::new()).body else { panic!("an object") };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"result":"success","msg":"","ignored_parameters_unsupported":["alpha","mid","zeta"]}"#
        );
        let super::super::response::Body::Text(text) = p.success_fields(r#""events":[]"#).body else { panic!("text") };
        assert_eq!(
            text,
            "{\"result\":\"success\",\"msg\":\"\",\"events\":[],\"ignored_parameters_unsupported\":[\"alpha\",\"mid\",\"zeta\"]}\n"
        );
    }

    #[test]
    fn typed_getters_use_zulip_messages() {
        let p = Params::from_parts("flag=1&n=7&ok=true", vec![]);
        assert_eq!(p.bool("flag").unwrap_err().msg, "flag is not a boolean");
        assert_eq!(p.int("n").unwrap(), Some(7));
        assert!(p.bool_or("ok", false).unwrap());
        assert!(p.bool_or("absent", true).unwrap());
        let missing = p.required_str("content").unwrap_err();
        assert_eq!(missing.msg, "Missing 'content' argument");
        assert!(p.ignored().is_empty());
    }

    #[test]
    fn aliases_take_either_name_but_not_both() {
        let p = Params::from_parts("client_gravatar=false", vec![]);
        assert!(!p.bool_aliased("client_external_avatar", "client_gravatar", true).unwrap());
        assert!(p.ignored().is_empty());
        let p = Params::from_parts("client_gravatar=false&client_external_avatar=true", vec![]);
        let e = p.bool_aliased("client_external_avatar", "client_gravatar", true).unwrap_err();
        assert_eq!(e.msg, "Can't decide between 'client_external_avatar' and 'client_gravatar' arguments");
        assert_eq!(e.code, Some(ErrorCode::RequestConfusingVar));
    }
}

/// Properties of the merged parameters over arbitrary query strings and forms.
#[cfg(test)]
mod properties {
    use agora_actors::ErrorCode;
    use proptest::prelude::*;

    use super::*;

    fn form_pairs() -> impl Strategy<Value = Vec<(String, String)>> {
        prop::collection::vec(("[a-c]{1,2}", any::<String>()), 0..8)
    }

    /// `pairs` as a query string, percent-encoded.
    fn encoded(pairs: &[(String, String)]) -> String {
        form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_query_string_is_taken_without_panicking(query in any::<String>(), name in "[a-z]{1,3}") {
            let p = Params::from_parts(&query, vec![]);
            let _ = p.str(&name);
            for err in [p.bool(&name).err(), p.int(&name).err(), p.decode(&name, decode::integer_list).err()].into_iter().flatten() {
                prop_assert_eq!((err.status, err.code), (400, Some(ErrorCode::BadRequest)));
                prop_assert!(err.msg.starts_with(&name), "{}", err.msg);
            }
            let ignored = p.ignored();
            prop_assert!(ignored.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats: {:?}", ignored);
            prop_assert!(!ignored.contains(&name));
        }

        #[test]
        fn the_body_wins_and_the_last_repeat_wins(query in form_pairs(), body in form_pairs(), name in "[a-c]{1,2}") {
            let p = Params::from_parts(&encoded(&query), body.clone());
            let last = |list: &[(String, String)]| list.iter().rev().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
            prop_assert_eq!(p.str(&name), last(&body).or_else(|| last(&query)));
        }

        #[test]
        fn typed_values_survive_the_query_string(n in any::<i64>(), b in any::<bool>(), ids in prop::collection::vec(any::<i64>(), 0..10)) {
            let pairs = vec![
                ("n".to_owned(), n.to_string()),
                ("b".to_owned(), b.to_string()),
                ("ids".to_owned(), serde_json::to_string(&ids).unwrap()),
            ];
            let p = Params::from_parts(&encoded(&pairs), vec![]);
            prop_assert_eq!(p.int("n").unwrap(), Some(n));
            prop_assert_eq!(p.bool("b").unwrap(), Some(b));
            prop_assert_eq!(p.decode("ids", decode::integer_list).unwrap(), Some(ids));
            prop_assert!(p.ignored().is_empty());
        }
    }
}
