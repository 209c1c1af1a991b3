//! Pure validation of custom profile fields and their values, with Zulip's messages
//! (zerver/lib/validator.py, zerver/lib/external_accounts.py,
//! zerver/models/custom_profile_fields.py).

use std::collections::HashSet;

use chrono::NaiveDate;
use serde_json::{Map, Value};

/// Field types (spec 2.12).
pub mod field_type {
    pub const SHORT_TEXT: i64 = 1;
    pub const LONG_TEXT: i64 = 2;
    pub const SELECT: i64 = 3;
    pub const DATE: i64 = 4;
    pub const URL: i64 = 5;
    pub const USER: i64 = 6;
    pub const EXTERNAL_ACCOUNT: i64 = 7;
    pub const PRONOUNS: i64 = 8;
}

use field_type::*;

/// Longest field label, in characters.
pub const NAME_MAX_LENGTH: usize = 40;
/// Longest field hint, in characters.
pub const HINT_MAX_LENGTH: usize = 80;
/// Longest value of short-text-like fields.
pub const SHORT_VALUE_MAX_LENGTH: usize = 50;
/// Longest value of long text fields.
pub const LONG_VALUE_MAX_LENGTH: usize = 500;

/// The external account subtypes Zulip 10.2 knows, with the label their fields get.
pub const DEFAULT_EXTERNAL_ACCOUNTS: [(&str, &str); 2] =
    [("twitter", "Twitter username"), ("github", "GitHub username")];

/// A validation failure: Zulip's message.
pub type Invalid = String;

/// Whether a field type is one of the eight Zulip knows.
pub fn is_known_type(field_type: i64) -> bool {
    (SHORT_TEXT..=PRONOUNS).contains(&field_type)
}

/// Whether values of this type are Markdown, stored with a `rendered_value`.
pub fn is_renderable(field_type: i64) -> bool {
    matches!(field_type, SHORT_TEXT | LONG_TEXT)
}

/// Whether a field of this type has `field_data` (choices or an external account).
pub fn has_field_data(field_type: i64) -> bool {
    matches!(field_type, SELECT | EXTERNAL_ACCOUNT)
}

/// The label of a default (non-`custom`) external account field, when `field_data` makes
/// the field one.
pub fn default_external_label(field_type: i64, field_data: &Map<String, Value>) -> Option<&'static str> {
    if field_type != EXTERNAL_ACCOUNT {
        return None;
    }
    let subtype = field_data.get("subtype").and_then(Value::as_str)?;
    DEFAULT_EXTERNAL_ACCOUNTS.iter().find(|(name, _)| *name == subtype).map(|(_, label)| *label)
}

/// A field's label and hint (`validate_field_name_and_hint`): the label not blank, both
/// within their lengths.
pub fn name_and_hint(name: &str, hint: &str) -> Result<(), Invalid> {
    if name.trim().is_empty() {
        return Err("Label cannot be blank.".into());
    }
    capped("hint", hint, HINT_MAX_LENGTH)?;
    capped("name", name, NAME_MAX_LENGTH)
}

/// `field_data` of a field of `field_type` (`validate_custom_field_data`).
pub fn field_data(field_type: i64, data: &Map<String, Value>) -> Result<(), Invalid> {
    match field_type {
        SELECT => select_field_data(data),
        EXTERNAL_ACCOUNT => external_account_field_data(data),
        _ => Ok(()),
    }
}

/// The choices of a list-of-options field: `{"<key>": {"text": str, "order": str}}`.
fn select_field_data(data: &Map<String, Value>) -> Result<(), Invalid> {
    if data.is_empty() {
        return Err("Field must have at least one choice.".into());
    }
    let mut texts = HashSet::new();
    for (key, choice) in data {
        if key.trim().is_empty() {
            return Err("'value' cannot be blank.".into());
        }
        let choice = dict_only("field_data", choice, &["text", "order"], &[])?;
        for key in ["text", "order"] {
            required_string(&format!("field_data[\"{key}\"]"), &choice[key])?;
        }
        texts.insert(choice["text"].as_str().unwrap_or_default());
    }
    if texts.len() != data.len() {
        return Err("Field must not have duplicate choices.".into());
    }
    Ok(())
}

/// An external account field: `{"subtype": str, "url_pattern"?: str}`.
fn external_account_field_data(data: &Map<String, Value>) -> Result<(), Invalid> {
    dict_only("field_data", &Value::Object(data.clone()), &["subtype"], &["url_pattern"])?;
    let subtype = required_string("field_data[\"subtype\"]", &data["subtype"])?;
    if let Some(pattern) = data.get("url_pattern") {
        url_pattern("field_data[\"url_pattern\"]", pattern)?;
    }
    if DEFAULT_EXTERNAL_ACCOUNTS.iter().any(|(name, _)| *name == subtype) {
        return Ok(());
    }
    if subtype != "custom" {
        return Err("Invalid external account type".into());
    }
    if !data.contains_key("url_pattern") {
        return Err("Custom external account must define URL pattern".into());
    }
    Ok(())
}

/// `check_external_account_url_pattern`: one `%(username)s`, and a URL around it.
fn url_pattern(var_name: &str, value: &Value) -> Result<(), Invalid> {
    let pattern = string(var_name, value)?;
    if pattern.matches("%(username)s").count() != 1 {
        return Err("URL pattern must contain '%(username)s'.".into());
    }
    url(var_name, &Value::from(pattern.replace("%(username)s", "username"))).map(|_| ())
}

/// `check_dict_only`: an object with the required keys, and no keys but these.
fn dict_only<'a>(
    var_name: &str,
    value: &'a Value,
    required: &[&str],
    optional: &[&str],
) -> Result<&'a Map<String, Value>, Invalid> {
    let Value::Object(map) = value else {
        return Err(format!("{var_name} is not a dict"));
    };
    if let Some(missing) = required.iter().find(|k| !map.contains_key(**k)) {
        return Err(format!("{missing} key is missing from {var_name}"));
    }
    let extra: Vec<&str> =
        map.keys().map(String::as_str).filter(|k| !required.contains(k) && !optional.contains(k)).collect();
    if !extra.is_empty() {
        return Err(format!("Unexpected arguments: {}", extra.join(", ")));
    }
    Ok(map)
}

fn string<'a>(var_name: &str, value: &'a Value) -> Result<&'a str, Invalid> {
    value.as_str().ok_or_else(|| format!("{var_name} is not a string"))
}

fn required_string<'a>(var_name: &str, value: &'a Value) -> Result<&'a str, Invalid> {
    let s = string(var_name, value)?;
    if s.trim().is_empty() {
        return Err(format!("{var_name} cannot be blank."));
    }
    Ok(s)
}

fn capped(var_name: &str, s: &str, max: usize) -> Result<(), Invalid> {
    if s.chars().count() > max {
        return Err(format!("{var_name} is too long (limit: {max} characters)"));
    }
    Ok(())
}

/// A user's value of a field, checked against the field's type. `var_name` is the field's
/// label, as Zulip names it in messages. Person pickers are checked by the caller (they
/// need the realm's users); here only their shape. Returns the value as stored: strings as
/// given, user id lists as compact JSON.
pub fn value(field_type: i64, var_name: &str, field_data: &str, value: &Value) -> Result<String, Invalid> {
    let text = |max: usize| -> Result<String, Invalid> {
        let s = string(var_name, value)?;
        capped(var_name, s, max)?;
        Ok(s.to_owned())
    };
    match field_type {
        SHORT_TEXT | EXTERNAL_ACCOUNT | PRONOUNS => text(SHORT_VALUE_MAX_LENGTH),
        LONG_TEXT => text(LONG_VALUE_MAX_LENGTH),
        DATE => date(var_name, value),
        URL => url(var_name, value),
        SELECT => select_choice(var_name, field_data, value),
        _ => user_ids(value).map(|ids| Value::from(ids).to_string()),
    }
}

/// `check_date`: exactly `YYYY-MM-DD`, a real day.
fn date(var_name: &str, value: &Value) -> Result<String, Invalid> {
    let s = string(var_name, value)?;
    let valid = NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok_and(|d| d.format("%Y-%m-%d").to_string() == s);
    if valid {
        Ok(s.to_owned())
    } else {
        Err(format!("{var_name} is not a date"))
    }
}

/// `validate_select_field`: one of the field's option keys.
fn select_choice(var_name: &str, field_data: &str, value: &Value) -> Result<String, Invalid> {
    let s = string(var_name, value)?;
    let choices: Map<String, Value> = serde_json::from_str(field_data).unwrap_or_default();
    if !choices.contains_key(s) {
        return Err(format!("'{s}' is not a valid choice for '{var_name}'."));
    }
    Ok(s.to_owned())
}

/// The shape of a person picker's value (`check_list(check_int)("User IDs", ...)`).
pub fn user_ids(value: &Value) -> Result<Vec<i64>, Invalid> {
    let Value::Array(items) = value else {
        return Err("User IDs is not a list".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| v.as_i64().filter(|_| !v.is_f64()).ok_or_else(|| format!("User IDs[{i}] is not an integer")))
        .collect()
}

/// `check_url` (Django's `URLValidator`): an http(s) or ftp(s) URL with a host name,
/// IPv4 or bracketed IPv6 address, an optional port, and no whitespace.
fn url(var_name: &str, value: &Value) -> Result<String, Invalid> {
    let s = string(var_name, value)?;
    if is_url(s) {
        Ok(s.to_owned())
    } else {
        Err(format!("{var_name} is not a URL"))
    }
}

fn is_url(s: &str) -> bool {
    if s.chars().any(char::is_whitespace) || s.len() > 2048 {
        return false;
    }
    let Some((scheme, rest)) = s.split_once("://") else { return false };
    if !["http", "https", "ftp", "ftps"].contains(&scheme.to_ascii_lowercase().as_str()) {
        return false;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    // Drop `user:password@`.
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = split_port(host_port);
    if port.is_some_and(|p| p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    is_host(host)
}

/// Splits `host:port` (IPv6 hosts are bracketed).
fn split_port(host_port: &str) -> (&str, Option<&str>) {
    if host_port.starts_with('[') {
        return match host_port.find(']') {
            Some(i) => (&host_port[..=i], host_port[i + 1..].strip_prefix(':')),
            None => (host_port, None),
        };
    }
    match host_port.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (host_port, None),
    }
}

fn is_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    if host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::Ipv4Addr>().is_ok() {
        return true;
    }
    let host = host.strip_suffix('.').unwrap_or(host);
    let labels: Vec<&str> = host.split('.').collect();
    let Some(tld) = labels.last() else { return false };
    let tld_ok = tld.chars().count() >= 2 && tld.chars().all(|c| c.is_alphabetic() || c == '-')
        || tld.to_ascii_lowercase().starts_with("xn--");
    labels.len() >= 2
        && tld_ok
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.chars().count() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn labels_and_hints() {
        assert_eq!(name_and_hint("  ", "").unwrap_err(), "Label cannot be blank.");
        assert_eq!(name_and_hint(&"n".repeat(41), "").unwrap_err(), "name is too long (limit: 40 characters)");
        assert_eq!(name_and_hint("x", &"h".repeat(81)).unwrap_err(), "hint is too long (limit: 80 characters)");
        assert!(name_and_hint(&"é".repeat(40), &"h".repeat(80)).is_ok());
    }

    #[test]
    fn select_choices() {
        let err = |v: Value| field_data(SELECT, &obj(v)).unwrap_err();
        assert_eq!(err(json!({})), "Field must have at least one choice.");
        assert_eq!(err(json!({" ": {"text": "a", "order": "1"}})), "'value' cannot be blank.");
        assert_eq!(err(json!({"a": "x"})), "field_data is not a dict");
        assert_eq!(err(json!({"a": {"text": "a"}})), "order key is missing from field_data");
        assert_eq!(err(json!({"a": {"text": "", "order": "1"}})), "field_data[\"text\"] cannot be blank.");
        assert_eq!(err(json!({"a": {"text": "a", "order": 1}})), "field_data[\"order\"] is not a string");
        assert_eq!(err(json!({"a": {"text": "a", "order": "1", "x": "y"}})), "Unexpected arguments: x");
        assert_eq!(
            err(json!({"a": {"text": "A", "order": "1"}, "b": {"text": "A", "order": "2"}})),
            "Field must not have duplicate choices."
        );
        assert!(field_data(SELECT, &obj(json!({"a": {"text": "A", "order": "1"}}))).is_ok());
    }

    #[test]
    fn external_accounts() {
        let err = |v: Value| field_data(EXTERNAL_ACCOUNT, &obj(v)).unwrap_err();
        assert_eq!(err(json!({})), "subtype key is missing from field_data");
        assert_eq!(err(json!({"subtype": "myspace"})), "Invalid external account type");
        assert_eq!(err(json!({"subtype": "custom"})), "Custom external account must define URL pattern");
        assert_eq!(
            err(json!({"subtype": "custom", "url_pattern": "https://x.com/"})),
            "URL pattern must contain '%(username)s'."
        );
        assert_eq!(
            err(json!({"subtype": "custom", "url_pattern": "nope/%(username)s"})),
            "field_data[\"url_pattern\"] is not a URL"
        );
        assert!(field_data(EXTERNAL_ACCOUNT, &obj(json!({"subtype": "github"}))).is_ok());
        let custom = obj(json!({"subtype": "custom", "url_pattern": "https://ex.com/u/%(username)s"}));
        assert!(field_data(EXTERNAL_ACCOUNT, &custom).is_ok());
        assert_eq!(
            default_external_label(EXTERNAL_ACCOUNT, &obj(json!({"subtype": "github"}))),
            Some("GitHub username")
        );
        assert_eq!(default_external_label(EXTERNAL_ACCOUNT, &custom), None);
    }

    #[test]
    fn values_by_type() {
        let v = |t: i64, val: Value| value(t, "F", r#"{"0":{"text":"A","order":"1"}}"#, &val);
        assert_eq!(v(SHORT_TEXT, json!("hi")).unwrap(), "hi");
        assert_eq!(v(SHORT_TEXT, json!(3)).unwrap_err(), "F is not a string");
        assert_eq!(v(PRONOUNS, json!("x".repeat(51))).unwrap_err(), "F is too long (limit: 50 characters)");
        assert!(v(LONG_TEXT, json!("x".repeat(500))).is_ok());
        assert_eq!(v(LONG_TEXT, json!("x".repeat(501))).unwrap_err(), "F is too long (limit: 500 characters)");
        assert_eq!(v(DATE, json!("1909-03-05")).unwrap(), "1909-03-05");
        for bad in ["1909-3-5", "1909-02-30", "05/03/1909", "19090305"] {
            assert_eq!(v(DATE, json!(bad)).unwrap_err(), "F is not a date", "{bad}");
        }
        assert_eq!(v(SELECT, json!("0")).unwrap(), "0");
        assert_eq!(v(SELECT, json!("1")).unwrap_err(), "'1' is not a valid choice for 'F'.");
        assert_eq!(v(USER, json!([3, 1])).unwrap(), "[3,1]");
        assert_eq!(v(USER, json!("3")).unwrap_err(), "User IDs is not a list");
        assert_eq!(v(USER, json!([1, "2"])).unwrap_err(), "User IDs[1] is not an integer");
    }

    #[test]
    fn urls() {
        for good in [
            "https://zulip.com",
            "http://example.com/a/b?c=d#e",
            "ftp://user:pw@files.example.org:21/x",
            "http://localhost:9991",
            "http://127.0.0.1/",
            "https://[::1]:8080/",
            "https://sub-domain.example.co.uk.",
        ] {
            assert!(is_url(good), "{good}");
        }
        for bad in [
            "zulip.com",
            "javascript:alert(1)",
            "mailto:a@b.c",
            "https://",
            "https://exa mple.com",
            "https://example",
            "https://-x.com",
            "https://x.com:port",
            "gopher://x.com",
        ] {
            assert!(!is_url(bad), "{bad}");
        }
    }
}
