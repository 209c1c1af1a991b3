//! The system bots' texts against Zulip's (computed with Zulip's own functions), and the
//! notices planned for new members.

use std::sync::Arc;

use serde_json::json;

use super::texts::*;
use super::*;
use crate::ids::UserId;
use crate::realm::chat::fixture_tests::{channel, realm, set_realm, user};
use crate::realm::model::Role;

/// What Zulip's `remove_single_newlines` makes of its welcome template, for a member and
/// for an administrator.
const MEMBER_WELCOME: &str = "Hello, and welcome to Zulip!👋 \n\n\nTo learn more, check out our [getting started guide](/help/getting-started-with-zulip)! \n\n\nYou can always come back to the [Welcome to Zulip video](https://static.zulipchat.com/static/navigation-tour-video/zulip-10.mp4) for a quick app overview.";
const ADMIN_WELCOME: &str = "Hello, and welcome to Zulip!👋 \n\n\nTo learn more, check out our [getting started guide](/help/getting-started-with-zulip)!  We also have a guide for [moving your organization to Zulip](/help/moving-to-zulip).\n\n\n\nYou can always come back to the [Welcome to Zulip video](https://static.zulipchat.com/static/navigation-tour-video/zulip-10.mp4) for a quick app overview.";

/// Adds the system bots, made from `template`'s account; (Notification Bot, Welcome Bot).
fn with_bots(state: &mut RealmState, template: UserId) -> (UserId, UserId) {
    let template = state.user(template).unwrap().clone();
    let mut ids = Vec::new();
    for (i, (email, name)) in SystemBot::ALL.iter().enumerate() {
        let id = UserId(900 + i as i64);
        let bot = User {
            id,
            delivery_email: (*email).into(),
            email: (*email).into(),
            full_name: (*name).into(),
            role: Role::Member,
            is_bot: true,
            bot_type: Some(1),
            bot_owner_id: None,
            ..template.clone()
        };
        state.system_bots.insert(id, Arc::new(bot));
        ids.push(id);
    }
    (ids[1], ids[2])
}

#[test]
fn lone_newlines_are_joined_as_zulip_joins_them() {
    assert_eq!(remove_single_newlines("\na\nb\n\nc\n- d\n1. e\n  f\n"), "a b\n\nc\n- d\n1. e f");
    let mut state = realm();
    let member = user(&mut state, "member", Role::Member);
    let admin = user(&mut state, "admin", Role::Administrator);
    assert_eq!(welcome_intro(state.user(member).unwrap(), false), MEMBER_WELCOME);
    assert_eq!(welcome_intro(state.user(admin).unwrap(), false), ADMIN_WELCOME);
}

#[test]
fn custom_welcome_text_is_quoted_with_a_fence_it_does_not_use() {
    assert_eq!(welcome_custom("Hi"), "\nA note from @_*role:administrators*:\n```quote\nHi\n```\n");
    assert_eq!(welcome_custom("x\n````\ny"), "\nA note from @_*role:administrators*:\n`````quote\nx\n````\ny\n`````\n");
}

#[test]
fn links_fall_back_to_markdown_for_names_that_break_them() {
    use crate::ids::{ChannelId, MessageId};
    assert_eq!(topic_link(ChannelId(3), "general", "lunch"), "#**general>lunch**");
    assert_eq!(channel_link(ChannelId(3), "a*b"), "[#a&#42;b](#narrow/channel/3-a*b)");
    assert_eq!(
        topic_link(ChannelId(3), "dev team", "a > b"),
        "[#dev team > a &gt; b](#narrow/channel/3-dev-team/topic/a.20.3E.20b)"
    );
    assert_eq!(
        message_url("http://x.test", ChannelId(3), "dev team", "1.5 (new)", MessageId(9)),
        "http://x.test/#narrow/channel/3-dev-team/topic/1.2E5.20.28new.29/near/9"
    );
}

#[test]
fn a_new_member_gets_the_signup_notice_and_welcome_bot_messages_starred() {
    let mut state = realm();
    let owner = user(&mut state, "owner", Role::Owner);
    let (notification_bot, welcome_bot) = with_bots(&mut state, owner);
    let newbie = user(&mut state, "newbie", Role::Member);
    let signups = channel(&mut state, "signups", false, &[]);
    set_realm(&mut state, "signup_announcements_stream_id", json!(signups.0));
    set_realm(&mut state, "welcome_message_custom_text", json!("Be kind."));
    let newbie_user = state.user(newbie).unwrap().clone();
    let notices = new_user_notices(&state, &newbie_user, None);
    let got: Vec<(UserId, NoticeTo, String, Vec<UserId>)> =
        notices.into_iter().map(|n| (n.sender, n.to, n.content, n.starred_for)).collect();
    assert_eq!(
        got,
        vec![
            (
                notification_bot,
                NoticeTo::Channel(signups, "signups".into()),
                format!("@_**newbie|{}** joined this organization.", newbie.0),
                vec![]
            ),
            (welcome_bot, NoticeTo::Direct(vec![newbie]), MEMBER_WELCOME.into(), vec![newbie]),
            (welcome_bot, NoticeTo::Direct(vec![newbie]), welcome_custom("Be kind."), vec![newbie]),
        ]
    );
}

/// Zulip's `send_pm_if_empty_stream` texts, and who never gets one.
#[test]
fn a_bots_owner_is_told_of_missing_and_empty_channels_only() {
    use super::bot_alerts::channel_alert;
    use crate::realm::chat::fixture_tests::{bot, edit_user};
    use crate::realm::chat::send::ChannelRef;

    let mut state = realm();
    let owner = user(&mut state, "owner", Role::Member);
    let gone = user(&mut state, "gone", Role::Member);
    let helper = bot(&mut state, "helper", owner);
    let orphan = bot(&mut state, "orphan", owner);
    edit_user(&mut state, orphan, |u| u.bot_owner_id = None);
    // A human can have no owner's alert, whatever the record says.
    let human = user(&mut state, "human", Role::Member);
    edit_user(&mut state, human, |u| u.bot_owner_id = Some(owner));
    let busy = channel(&mut state, "busy", false, &[owner]);
    // Subscribed only by a deactivated user: empty, as Zulip counts.
    let deserted = channel(&mut state, "deserted (old)", false, &[gone]);
    state.set_user_active(gone, false);

    let alert = |sender: UserId, target: ChannelRef| channel_alert(&state, state.user(sender).unwrap(), &target);
    let name = |n: &str| ChannelRef::Name(n.to_owned());
    assert_eq!(
        alert(helper, name("  nowhere ")).as_deref(),
        Some("Your bot `helper@acme.test` tried to send a message to channel #**nowhere**, but that channel does not exist. Click [here](#channels/new) to create it.")
    );
    assert_eq!(
        alert(helper, ChannelRef::Id(777)).as_deref(),
        Some("Your bot `helper@acme.test` tried to send a message to channel ID 777, but there is no channel with that ID.")
    );
    assert_eq!(
        alert(helper, ChannelRef::Id(deserted.0)).as_deref(),
        Some("Your bot `helper@acme.test` tried to send a message to channel #**deserted (old)**. The channel exists but does not have any subscribers.")
    );
    assert_eq!(alert(helper, name("busy")), None);
    assert_eq!(alert(helper, ChannelRef::Id(busy.0)), None);
    // An invalid name is the send's own error.
    assert_eq!(alert(helper, name("   ")), None);
    assert_eq!(alert(orphan, name("nowhere")), None);
    assert_eq!(alert(human, name("nowhere")), None);
}
