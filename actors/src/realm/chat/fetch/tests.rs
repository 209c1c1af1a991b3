//! Fetch parameters.

use super::*;

#[test]
fn anchors_parse() {
    assert_eq!(Anchor::parse("newest").unwrap(), Anchor::Newest);
    assert_eq!(Anchor::parse("42").unwrap(), Anchor::Id(MessageId(42)));
    assert_eq!(Anchor::parse("x").unwrap_err().msg, "Invalid anchor");
}
