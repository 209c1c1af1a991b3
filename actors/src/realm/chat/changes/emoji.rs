//! Emoji for reactions (Zulip's `zerver/lib/emoji.py`): a table of common Unicode emoji
//! names and codes, and the `zulip` extra emoji. The organization's custom emoji are not
//! supported yet.

use crate::error::{ApiError, ApiResult};

/// `reaction_type` of Unicode emoji.
pub const UNICODE: &str = "unicode_emoji";
/// `reaction_type` of custom emoji.
pub const REALM: &str = "realm_emoji";
/// `reaction_type` of Zulip's own emoji (`zulip`).
pub const ZULIP_EXTRA: &str = "zulip_extra_emoji";

/// Unicode emoji names and their codes (several names may share a code).
static NAME_TO_CODE: &[(&str, &str)] = &[
    ("grinning", "1f600"),
    ("smiley", "1f603"),
    ("smile", "1f604"),
    ("grin", "1f601"),
    ("laughing", "1f606"),
    ("sweat_smile", "1f605"),
    ("joy", "1f602"),
    ("rolling_on_the_floor_laughing", "1f923"),
    ("rofl", "1f923"),
    ("slight_smile", "1f642"),
    ("upside_down", "1f643"),
    ("wink", "1f609"),
    ("blush", "1f60a"),
    ("innocent", "1f607"),
    ("heart_eyes", "1f60d"),
    ("kiss", "1f617"),
    ("yum", "1f60b"),
    ("stuck_out_tongue", "1f61b"),
    ("thinking", "1f914"),
    ("neutral", "1f610"),
    ("expressionless", "1f611"),
    ("unamused", "1f612"),
    ("rolling_eyes", "1f644"),
    ("relieved", "1f60c"),
    ("pensive", "1f614"),
    ("sleepy", "1f62a"),
    ("sleeping", "1f634"),
    ("sunglasses", "1f60e"),
    ("confused", "1f615"),
    ("worried", "1f61f"),
    ("frown", "1f641"),
    ("open_mouth", "1f62e"),
    ("astonished", "1f632"),
    ("flushed", "1f633"),
    ("fearful", "1f628"),
    ("cry", "1f622"),
    ("sob", "1f62d"),
    ("scream", "1f631"),
    ("angry", "1f620"),
    ("rage", "1f621"),
    ("skull", "1f480"),
    ("poop", "1f4a9"),
    ("ghost", "1f47b"),
    ("robot", "1f916"),
    ("wave", "1f44b"),
    ("+1", "1f44d"),
    ("thumbs_up", "1f44d"),
    ("like", "1f44d"),
    ("-1", "1f44e"),
    ("thumbs_down", "1f44e"),
    ("clap", "1f44f"),
    ("pray", "1f64f"),
    ("muscle", "1f4aa"),
    ("eyes", "1f440"),
    ("heart", "2764"),
    ("love", "2764"),
    ("broken_heart", "1f494"),
    ("fire", "1f525"),
    ("star", "2b50"),
    ("sparkles", "2728"),
    ("tada", "1f389"),
    ("rocket", "1f680"),
    ("check", "2705"),
    ("cross_mark", "274c"),
    ("warning", "26a0"),
    ("question", "2753"),
    ("exclamation", "2757"),
    ("100", "1f4af"),
    ("hundred_points", "1f4af"),
    ("octopus", "1f419"),
    ("cat", "1f408"),
    ("dog", "1f415"),
    ("hamburger", "1f354"),
    ("pizza", "1f355"),
    ("cake", "1f370"),
    ("coffee", "2615"),
    ("beer", "1f37a"),
    ("zzz", "1f4a4"),
    ("bulb", "1f4a1"),
    ("working_on_it", "1f6e0"),
    ("lock", "1f512"),
    ("bell", "1f514"),
    ("gift", "1f381"),
    ("trophy", "1f3c6"),
    ("sunny", "2600"),
];

/// The code of a Unicode emoji name.
pub fn unicode_code(name: &str) -> Option<&'static str> {
    NAME_TO_CODE.iter().find(|(n, _)| *n == name).map(|(_, code)| *code)
}

/// Whether `code` is a known Unicode emoji code.
fn is_unicode_code(code: &str) -> bool {
    NAME_TO_CODE.iter().any(|(_, c)| *c == code)
}

/// The code and reaction type of an emoji name (Zulip's `get_emoji_data`).
pub fn emoji_data(name: &str) -> ApiResult<(String, &'static str)> {
    if name == "zulip" {
        return Ok((name.to_owned(), ZULIP_EXTRA));
    }
    unicode_code(name)
        .map(|code| (code.to_owned(), UNICODE))
        .ok_or_else(|| ApiError::bad_request(format!("Emoji '{name}' does not exist")))
}

/// Checks that a name, code and type name one emoji that may be used for a new reaction
/// (Zulip's `check_emoji_request`).
pub fn check_emoji(name: &str, code: &str, reaction_type: &str) -> ApiResult<()> {
    match reaction_type {
        REALM => Err(ApiError::bad_request("Invalid custom emoji.")),
        ZULIP_EXTRA if code != "zulip" => Err(ApiError::bad_request("Invalid emoji code.")),
        ZULIP_EXTRA if name != code => Err(ApiError::bad_request("Invalid emoji name.")),
        ZULIP_EXTRA => Ok(()),
        UNICODE if !is_unicode_code(code) => Err(ApiError::bad_request("Invalid emoji code.")),
        UNICODE if unicode_code(name) != Some(code) => Err(ApiError::bad_request("Invalid emoji name.")),
        UNICODE => Ok(()),
        _ => Err(ApiError::bad_request("Invalid emoji type.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_codes_and_types() {
        assert_eq!(emoji_data("smile").unwrap(), ("1f604".to_owned(), UNICODE));
        assert_eq!(emoji_data("zulip").unwrap(), ("zulip".to_owned(), ZULIP_EXTRA));
        assert_eq!(emoji_data("nope").unwrap_err().msg, "Emoji 'nope' does not exist");
    }

    #[test]
    fn checks_follow_zulips_order() {
        assert!(check_emoji("+1", "1f44d", UNICODE).is_ok());
        assert!(check_emoji("thumbs_up", "1f44d", UNICODE).is_ok());
        assert_eq!(check_emoji("smile", "1f44d", UNICODE).unwrap_err().msg, "Invalid emoji name.");
        assert_eq!(check_emoji("smile", "zzzz", UNICODE).unwrap_err().msg, "Invalid emoji code.");
        assert_eq!(check_emoji("zulip", "zulip", ZULIP_EXTRA).map_err(|e| e.msg), Ok(()));
        assert_eq!(check_emoji("smile", "zulip", ZULIP_EXTRA).unwrap_err().msg, "Invalid emoji name.");
        assert_eq!(check_emoji("smile", "1f604", "other").unwrap_err().msg, "Invalid emoji type.");
        assert_eq!(check_emoji("x", "1", REALM).unwrap_err().msg, "Invalid custom emoji.");
    }
}
