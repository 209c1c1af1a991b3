//! Slack's JSON files as Slack writes them: `users.json`, the conversation lists
//! (`channels.json`, `groups.json`, `dms.json`, `mpims.json`) and the messages of each day.
//! Every field is optional except those without which an object means nothing (ids); a
//! `null` reads as absent.

use serde::Deserialize;
use serde_json::Value;

/// A member of the workspace (`users.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub id: String,
    pub team_id: Option<String>,
    pub name: Option<String>,
    pub deleted: Option<bool>,
    pub real_name: Option<String>,
    pub tz: Option<String>,
    #[serde(default)]
    pub profile: Option<Profile>,
    pub is_admin: Option<bool>,
    pub is_owner: Option<bool>,
    pub is_primary_owner: Option<bool>,
    pub is_restricted: Option<bool>,
    pub is_ultra_restricted: Option<bool>,
    pub is_bot: Option<bool>,
}

/// A member's profile.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Profile {
    pub email: Option<String>,
    pub real_name_normalized: Option<String>,
    pub first_name: Option<String>,
    pub bot_id: Option<String>,
}

/// A channel, private channel, group DM or DM (the lists share their shape).
#[derive(Debug, Clone, Deserialize)]
pub struct Conversation {
    pub id: String,
    pub name: Option<String>,
    /// Seconds, as a number or a string.
    pub created: Option<Value>,
    pub creator: Option<String>,
    pub is_archived: Option<bool>,
    pub is_general: Option<bool>,
    pub members: Option<Vec<String>>,
    pub topic: Option<Described>,
    pub purpose: Option<Described>,
}

/// A channel's topic or purpose.
#[derive(Debug, Clone, Deserialize)]
pub struct Described {
    pub value: Option<String>,
}

/// One message of a day file.
#[derive(Debug, Clone, Deserialize)]
pub struct SlackMessage {
    pub subtype: Option<String>,
    pub user: Option<String>,
    pub bot_id: Option<String>,
    /// A bot message's name (legacy integrations).
    pub username: Option<String>,
    pub bot_profile: Option<BotProfile>,
    pub text: Option<String>,
    pub ts: Option<String>,
    pub thread_ts: Option<String>,
    pub reactions: Option<Vec<SlackReaction>>,
    pub files: Option<Vec<SlackFile>>,
    /// The one file of a `file_share` message (older exports).
    pub file: Option<SlackFile>,
    pub edited: Option<Edited>,
    /// A `file_comment`'s comment.
    pub comment: Option<Comment>,
    pub attachments: Option<Vec<LegacyAttachment>>,
}

/// The bot that sent a message, as newer exports describe it.
#[derive(Debug, Clone, Deserialize)]
pub struct BotProfile {
    pub name: Option<String>,
}

/// Everyone who reacted with one emoji.
#[derive(Debug, Clone, Deserialize)]
pub struct SlackReaction {
    pub name: String,
    pub users: Option<Vec<String>>,
}

/// A shared file (its bytes are not in the export).
#[derive(Debug, Clone, Deserialize)]
pub struct SlackFile {
    pub name: Option<String>,
    pub title: Option<String>,
    pub url_private: Option<String>,
    pub mimetype: Option<String>,
    pub mode: Option<String>,
    pub file_access: Option<String>,
    pub user: Option<String>,
}

/// When, and by whom, a message was last edited.
#[derive(Debug, Clone, Deserialize)]
pub struct Edited {
    pub ts: Option<String>,
}

/// A comment on a file.
#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    pub user: Option<String>,
}

/// A legacy attachment (integrations' cards).
#[derive(Debug, Clone, Deserialize)]
pub struct LegacyAttachment {
    pub fallback: Option<String>,
}

/// A Slack timestamp (`"1498393838.000102"`: seconds and microseconds, also the message's
/// id in its conversation) as microseconds.
pub fn micros(ts: &str) -> Option<i64> {
    let (seconds, fraction) = ts.split_once('.').unwrap_or((ts, ""));
    if seconds.is_empty()
        || !seconds.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let seconds: i64 = seconds.parse().ok()?;
    let mut digits: String = fraction.chars().take(6).collect();
    while digits.len() < 6 {
        digits.push('0');
    }
    let fraction: i64 = digits.parse().ok()?;
    seconds.checked_mul(1_000_000)?.checked_add(fraction)
}

/// Seconds given as a number or a string (`created`), 0 when neither.
pub fn seconds(value: Option<&Value>) -> i64 {
    match value {
        Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)).unwrap_or(0),
        Some(Value::String(s)) => micros(s).map(|m| m.div_euclid(1_000_000)).unwrap_or(0),
        _ => 0,
    }
}

/// `YYYY-MM-DD` of a time in UTC.
pub fn utc_date(seconds: i64) -> String {
    // Howard Hinnant's days-to-civil.
    let z = seconds.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_and_dates() {
        assert_eq!(micros("1498393838.000102"), Some(1_498_393_838_000_102));
        assert_eq!(micros("1498393838"), Some(1_498_393_838_000_000));
        assert_eq!(micros("1498393838.5"), Some(1_498_393_838_500_000));
        assert_eq!(micros("x.1"), None);
        assert_eq!(micros(""), None);
        assert_eq!(utc_date(1_434_139_102), "2015-06-12");
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(seconds(Some(&Value::from("1433559319"))), 1_433_559_319);
    }
}
