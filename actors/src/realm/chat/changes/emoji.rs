//! Emoji for reactions (Zulip's `zerver/lib/emoji.py`): the organization's active custom
//! emoji, the Unicode emoji of [`crate::emoji`]'s table, and the `zulip` extra emoji.

use crate::emoji::{code_of, is_code};
use crate::error::{ApiError, ApiResult};
use crate::realm::uploads_data::UploadsData;

/// `reaction_type` of Unicode emoji.
pub const UNICODE: &str = "unicode_emoji";
/// `reaction_type` of custom emoji.
pub const REALM: &str = "realm_emoji";
/// `reaction_type` of Zulip's own emoji (`zulip`).
pub const ZULIP_EXTRA: &str = "zulip_extra_emoji";

/// The code and reaction type of an emoji name (Zulip's `get_emoji_data`): an active custom
/// emoji first (its id is its code).
pub fn emoji_data(custom: &UploadsData, name: &str) -> ApiResult<(String, &'static str)> {
    if let Some(emoji) = custom.active_emoji(name) {
        return Ok((emoji.id.to_string(), REALM));
    }
    if name == "zulip" {
        return Ok((name.to_owned(), ZULIP_EXTRA));
    }
    code_of(name)
        .map(|code| (code.to_owned(), UNICODE))
        .ok_or_else(|| ApiError::bad_request(format!("Emoji '{name}' does not exist")))
}

/// Checks that a name, code and type name one emoji that may be used for a new reaction
/// (Zulip's `check_emoji_request`).
pub fn check_emoji(custom: &UploadsData, name: &str, code: &str, reaction_type: &str) -> ApiResult<()> {
    match reaction_type {
        REALM => {
            let emoji = code
                .parse::<i64>()
                .ok()
                .and_then(|id| custom.emoji_by_id(id))
                .ok_or_else(|| ApiError::bad_request("Invalid custom emoji."))?;
            if emoji.name != name {
                return Err(ApiError::bad_request("Invalid custom emoji name."));
            }
            if emoji.deactivated {
                return Err(ApiError::bad_request("This custom emoji has been deactivated."));
            }
            Ok(())
        }
        ZULIP_EXTRA if code != "zulip" => Err(ApiError::bad_request("Invalid emoji code.")),
        ZULIP_EXTRA if name != code => Err(ApiError::bad_request("Invalid emoji name.")),
        ZULIP_EXTRA => Ok(()),
        UNICODE if !is_code(code) => Err(ApiError::bad_request("Invalid emoji code.")),
        UNICODE if code_of(name) != Some(code) => Err(ApiError::bad_request("Invalid emoji name.")),
        UNICODE => Ok(()),
        _ => Err(ApiError::bad_request("Invalid emoji type.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_codes_and_types() {
        let none = UploadsData::default();
        let emoji_data = |name| super::emoji_data(&none, name);
        assert_eq!(emoji_data("smile").unwrap(), ("1f604".to_owned(), UNICODE));
        assert_eq!(emoji_data("zulip").unwrap(), ("zulip".to_owned(), ZULIP_EXTRA));
        assert_eq!(emoji_data("not_an_emoji").unwrap_err().msg, "Emoji 'not_an_emoji' does not exist");
    }

    #[test]
    fn checks_follow_zulips_order() {
        let none = UploadsData::default();
        let check_emoji = |a, b, c| super::check_emoji(&none, a, b, c);
        assert!(check_emoji("+1", "1f44d", UNICODE).is_ok());
        assert!(check_emoji("thumbs_up", "1f44d", UNICODE).is_ok());
        assert_eq!(check_emoji("smile", "1f44d", UNICODE).unwrap_err().msg, "Invalid emoji name.");
        assert_eq!(check_emoji("smile", "zzzz", UNICODE).unwrap_err().msg, "Invalid emoji code.");
        assert_eq!(check_emoji("zulip", "zulip", ZULIP_EXTRA).map_err(|e| e.msg), Ok(()));
        assert_eq!(check_emoji("smile", "zulip", ZULIP_EXTRA).unwrap_err().msg, "Invalid emoji name.");
        assert_eq!(check_emoji("smile", "1f604", "other").unwrap_err().msg, "Invalid emoji type.");
        assert_eq!(check_emoji("x", "1", REALM).unwrap_err().msg, "Invalid custom emoji.");
    }

    /// Every Unicode emoji Zulip names, aliases and sequences included, not only a few.
    #[test]
    fn the_whole_table_is_accepted() {
        let none = UploadsData::default();
        let emoji_data = |name| super::emoji_data(&none, name);
        let check_emoji = |a, b, c| super::check_emoji(&none, a, b, c);
        assert_eq!(emoji_data("avocado").unwrap(), ("1f951".to_owned(), UNICODE));
        assert_eq!(emoji_data("like").unwrap(), ("1f44d".to_owned(), UNICODE));
        assert_eq!(emoji_data("rainbow_flag").unwrap(), ("1f3f3-200d-1f308".to_owned(), UNICODE));
        assert!(check_emoji("avocado", "1f951", UNICODE).is_ok());
        assert!(check_emoji("pray", "1f64f", UNICODE).is_ok());
        assert!(check_emoji("folded_hands", "1f64f", UNICODE).is_ok());
        assert!(check_emoji("rainbow_flag", "1f3f3-200d-1f308", UNICODE).is_ok());
        // The qualified sequence (with U+FE0F) is not an emoji code.
        assert_eq!(
            check_emoji("rainbow_flag", "1f3f3-fe0f-200d-1f308", UNICODE).unwrap_err().msg,
            "Invalid emoji code."
        );
        assert_eq!(check_emoji("avocado", "1f419", UNICODE).unwrap_err().msg, "Invalid emoji name.");
    }
}
