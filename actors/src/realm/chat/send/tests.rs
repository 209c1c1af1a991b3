//! Sending: parsing `to`, the content and topic rules, and plans of messages checked
//! against a state without a database.

use super::*;
use crate::realm::catalog::MAX_MESSAGE_LENGTH;

#[test]
fn recipients_parse_as_zulip_does() {
    assert_eq!(SendTo::parse("stream", "general").unwrap(), SendTo::Channel(ChannelRef::Name("general".into())));
    assert_eq!(SendTo::parse("channel", "7").unwrap(), SendTo::Channel(ChannelRef::Id(7)));
    assert_eq!(SendTo::parse("channel", "[\"x\"]").unwrap(), SendTo::Channel(ChannelRef::Name("x".into())));
    assert_eq!(SendTo::parse("channel", "[]").unwrap_err().msg, "Expected exactly one channel");
    assert_eq!(
        SendTo::parse("private", "a@x.com, b@x.com").unwrap(),
        SendTo::Direct(DirectRef::Emails(vec!["a@x.com".into(), "b@x.com".into()]))
    );
    assert_eq!(SendTo::parse("direct", "[3, 4]").unwrap(), SendTo::Direct(DirectRef::Ids(vec![3, 4])));
    assert_eq!(
        SendTo::parse("direct", "[3, \"a@x.com\"]").unwrap_err().msg,
        "Recipient lists may contain emails or user IDs, but not both."
    );
}

#[test]
fn content_and_topics_are_normalized() {
    assert_eq!(normalize_content("\n\nhi  \n").unwrap(), "hi");
    assert_eq!(normalize_content("  \n").unwrap_err().msg, "Message must not be empty");
    assert_eq!(normalize_content("a\0b").unwrap_err().msg, "Message must not contain null bytes");
    let long = "x".repeat(MAX_MESSAGE_LENGTH + 5);
    let cut = normalize_content(&long).unwrap();
    assert_eq!(cut.chars().count(), MAX_MESSAGE_LENGTH);
    assert!(cut.ends_with("\n[message truncated]"));
    assert_eq!(normalize_topic("  (no topic) "), "");
    let topic = normalize_topic(&"t".repeat(70));
    assert_eq!(topic, format!("{}...", "t".repeat(57)));
}
