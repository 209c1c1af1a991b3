//! The texts of the system bots' messages, word for word Zulip's (English), and the link
//! syntaxes they use.

use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::model::{Channel, User};

/// Zulip's `NAVIGATION_TOUR_VIDEO_URL` default.
pub const NAVIGATION_TOUR_VIDEO_URL: &str = "https://static.zulipchat.com/static/navigation-tour-video/zulip-10.mp4";

/// Zulip's `silent_mention_syntax_for_user`.
pub fn silent_mention(user: &User) -> String {
    format!("@_**{}|{}**", user.full_name, user.id)
}

/// Characters that break `#**channel>topic**` (Zulip's `invalid_stream_topic_regex`).
fn breaks_link(word: &str) -> bool {
    word.contains(['`', '>', '*', '&', '[', ']']) || word.contains("$$")
}

/// Zulip's `escape_invalid_stream_topic_characters`.
fn escape_link_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace("$$", "&#36;&#36;")
        .replace('`', "&#96;")
        .replace('>', "&gt;")
        .replace('*', "&#42;")
        .replace('[', "&#91;")
        .replace(']', "&#93;")
}

/// Zulip's `encode_hash_component`: percent-encoding (`*` kept) with `%` as `.`.
pub fn encode_hash_component(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'~' | b'*' => out.push(char::from(b)),
            b'.' => out.push_str(".2E"),
            b'(' => out.push_str(".28"),
            b')' => out.push_str(".29"),
            _ => out.push_str(&format!(".{b:02X}")),
        }
    }
    out
}

/// Zulip's `encode_channel`: `<id>-<name with dashes for spaces, encoded>`.
pub fn encode_channel(id: ChannelId, name: &str) -> String {
    format!("{}-{}", id.0, encode_hash_component(&name.replace(' ', "-")))
}

/// Zulip's `get_fallback_markdown_link`.
fn fallback_link(id: ChannelId, name: &str, topic: Option<&str>, message: Option<MessageId>) -> String {
    let mut link = format!("#narrow/channel/{}", encode_channel(id, name));
    let mut text = format!("#{}", escape_link_text(name));
    if let Some(topic) = topic {
        link.push_str(&format!("/topic/{}", encode_hash_component(topic)));
        let shown = if topic.is_empty() { "general chat" } else { topic };
        text.push_str(&format!(" > {}", escape_link_text(shown)));
    }
    if let Some(message) = message {
        link.push_str(&format!("/near/{}", message.0));
        text.push_str(" @ 💬");
    }
    format!("[{text}]({link})")
}

/// Zulip's `get_message_link_syntax`.
pub fn message_link(id: ChannelId, name: &str, topic: &str, message: MessageId) -> String {
    if breaks_link(name) || breaks_link(topic) {
        fallback_link(id, name, Some(topic), Some(message))
    } else {
        format!("#**{name}>{topic}@{}**", message.0)
    }
}

/// Zulip's `get_stream_link_syntax`.
pub fn channel_link(id: ChannelId, name: &str) -> String {
    if breaks_link(name) {
        fallback_link(id, name, None, None)
    } else {
        format!("#**{name}**")
    }
}

/// Zulip's `get_stream_topic_link_syntax`.
pub fn topic_link(id: ChannelId, name: &str, topic: &str) -> String {
    if breaks_link(name) || breaks_link(topic) {
        fallback_link(id, name, Some(topic), None)
    } else {
        format!("#**{name}>{topic}**")
    }
}

/// Zulip's `get_message_link_syntax`: a link to a channel message, shown as the channel and
/// its topic.
pub fn message_link_syntax(id: ChannelId, name: &str, topic: &str, message: MessageId) -> String {
    let shown = if topic.is_empty() { "general chat" } else { topic };
    format!(
        "[#{} > {}](#narrow/channel/{}/topic/{}/with/{})",
        escape_link_text(name),
        escape_link_text(shown),
        encode_channel(id, name),
        encode_hash_component(topic),
        message.0
    )
}

/// Zulip's `stream_message_url`.
pub fn message_url(realm_url: &str, channel: ChannelId, name: &str, topic: &str, message: MessageId) -> String {
    format!(
        "{realm_url}/#narrow/channel/{}/topic/{}/near/{}",
        encode_channel(channel, name),
        encode_hash_component(topic),
        message.0
    )
}

/// Zulip's `remove_single_newlines`: lone newlines become spaces (with the spaces after
/// them), except before list items; blank lines stay.
pub fn remove_single_newlines(content: &str) -> String {
    let content = content.trim_matches('\n');
    let chars: Vec<char> = content.chars().collect();
    let mut out = String::with_capacity(content.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '\n' || (i > 0 && chars[i - 1] == '\n') || starts_protected(&chars[i + 1..]) {
            out.push(c);
            i += 1;
            continue;
        }
        out.push(' ');
        i += 1;
        while i < chars.len() && chars[i] == ' ' {
            i += 1;
        }
    }
    out
}

/// What a newline may not be joined before: another newline, `- `, `* ` or `1. `.
fn starts_protected(rest: &[char]) -> bool {
    match rest {
        ['\n', ..] | ['-' | '*', ' ', ..] => true,
        _ => {
            let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            digits > 0 && rest.get(digits) == Some(&'.') && rest.get(digits + 1) == Some(&' ')
        }
    }
}

/// Welcome Bot's first message to a new user (Zulip's `send_initial_direct_messages_to_user`
/// for an organization that is not a school, no demo, no tracked onboarding messages).
pub fn welcome_intro(user: &User, education: bool) -> String {
    let getting_started = if education {
        "\nTo learn more, check out our [using Zulip for a class guide](/help/using-zulip-for-a-class)!\n"
    } else {
        "\nTo learn more, check out our [getting started guide](/help/getting-started-with-zulip)!\n"
    };
    let organization_setup = match (user.role.is_admin(), education) {
        (false, _) => "",
        (true, true) => {
            "\nWe also have a guide for [setting up Zulip for a class](/help/setting-up-zulip-for-a-class).\n"
        }
        (true, false) => "\nWe also have a guide for [moving your organization to Zulip](/help/moving-to-zulip).\n",
    };
    let video = format!(
        "\nYou can always come back to the [Welcome to Zulip video]({NAVIGATION_TOUR_VIDEO_URL}) for a quick app overview.\n"
    );
    let content =
        format!("\nHello, and welcome to Zulip!👋 \n\n{getting_started} {organization_setup}\n\n{video}\n\n\n\n");
    remove_single_newlines(&content)
}

/// Zulip's `get_custom_welcome_message_string`: the organization's note, quoted.
pub fn welcome_custom(text: &str) -> String {
    let longest = text
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("   ").or_else(|| l.strip_prefix("  ")).or_else(|| l.strip_prefix(' ')).unwrap_or(l);
            let ticks = l.chars().take_while(|c| *c == '`').count();
            (ticks >= 3).then_some(ticks + 1)
        })
        .max()
        .unwrap_or(3);
    let fence = "`".repeat(longest.max(3));
    format!("\nA note from @_*role:administrators*:\n{fence}quote\n{text}\n{fence}\n")
}

/// Notification Bot's direct message to someone subscribed by someone else (Zulip's
/// `you_were_just_subscribed_message`); `names` sorted.
pub fn you_were_subscribed(acting: &User, names: &[String]) -> String {
    match names {
        [one] => format!("{} subscribed you to #**{one}**.", silent_mention(acting)),
        _ => {
            let mut message = format!("{} subscribed you to the following channels:\n\n", silent_mention(acting));
            for name in names {
                message.push_str(&format!("* #**{name}**\n"));
            }
            message
        }
    }
}

/// The new-channel announcement of channels created with `announce`.
pub fn new_channels(acting: &User, links: &[String]) -> String {
    if links.len() > 1 {
        format!("{} created the following channels: {}.", silent_mention(acting), links.join(", "))
    } else {
        format!("{} created a new channel {}.", silent_mention(acting), links.join(", "))
    }
}

/// Zulip's `Realm.STREAM_EVENTS_NOTIFICATION_TOPIC_NAME`: where the notices about a channel
/// itself go.
pub const CHANNEL_EVENTS_TOPIC: &str = "channel events";

/// The name of a channel's access policy (Zulip's `Stream.PERMISSION_POLICIES`).
pub fn access_policy_name(channel: &Channel) -> &'static str {
    match (channel.is_web_public, channel.invite_only, channel.history_public_to_subscribers) {
        (true, _, _) => "Web-public",
        (false, false, true) => "Public",
        (false, false, false) => "Public, protected history",
        (false, true, true) => "Private, shared history",
        (false, true, false) => "Private, protected history",
    }
}

/// A description in a channel event notice: itself, or an italic "No description.".
fn shown_description(description: &str) -> String {
    if description.is_empty() {
        "*No description.*".to_owned()
    } else {
        description.to_owned()
    }
}

/// The first message of a new channel: who created it, its kind and its description; none
/// for a public channel whose history is protected.
pub fn channel_created(acting: &User, channel: &Channel) -> Option<String> {
    let kind = access_policy_name(channel);
    if kind == "Public, protected history" {
        return None;
    }
    let description = shown_description(&channel.description);
    Some(format!(
        "**{kind}** channel created by {}. **Description:**\n```` quote\n{description}\n````",
        silent_mention(acting)
    ))
}

/// `who` changed a channel's access policy.
pub fn access_permissions_changed(who: &str, old: &str, new: &str) -> String {
    format!(
        "{who} changed the [access permissions](/help/channel-permissions) for this channel from **{old}** to **{new}**."
    )
}

/// `who` changed who may post in a channel (each side as `with_permission` lists it).
pub fn posting_permissions_changed(who: &str, old: &str, new: &str) -> String {
    format!(
        "{who} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n* **Old**: {old}\n* **New**: {new}\n"
    )
}

/// `who` changed a channel's description.
pub fn description_changed(who: &str, old: &str, new: &str) -> String {
    let (old, new) = (shown_description(old), shown_description(new));
    format!(
        "{who} changed the description for this channel.\n\n* **Old description:**\n```` quote\n{old}\n````\n* **New description:**\n```` quote\n{new}\n````"
    )
}

/// `who` changed a channel's retention period, in days (-1: forever; the organization's
/// period where the channel inherits it).
pub fn retention_changed(who: &str, old: i64, new: i64) -> String {
    let period = |days: i64| if days == -1 { "Forever".to_owned() } else { format!("{days} days") };
    let summary = if new == -1 {
        "Messages in this channel will now be retained forever.".to_owned()
    } else {
        format!("Messages in this channel will now be automatically deleted {new} days after they are sent.")
    };
    format!(
        "{who} has changed the [message retention period](/help/message-retention-policy) for this channel:\n* **Old retention period**: {}\n* **New retention period**: {}\n\n{summary}",
        period(old),
        period(new)
    )
}

/// How the general chat setting is named in notices (Zulip's
/// `TOPICS_POLICY_DISPLAY_NAME_MAP`).
fn topics_policy_name(policy: &str) -> &'static str {
    match policy {
        "allow_empty_topic" => "*general chat* topic allowed",
        "disable_empty_topic" => "No *general chat* topic",
        "empty_topic_only" => "Only *general chat* topic allowed",
        _ => "Automatic",
    }
}

/// `who` changed whether the channel takes messages in the general chat topic.
pub fn topics_policy_changed(who: &str, old: &str, new: &str) -> String {
    format!(
        "{who} changed the \"Allow posting to the *general chat* topic?\" setting from **{}** to **{}**.",
        topics_policy_name(old),
        topics_policy_name(new)
    )
}

/// `who` renamed a channel.
pub fn channel_renamed(who: &str, old: &str, new: &str) -> String {
    format!("{who} renamed channel **{old}** to **{new}**.")
}

/// A channel is back in use.
pub fn channel_unarchived(name: &str) -> String {
    format!("Channel #**{name}** has been unarchived.")
}

/// The signup announcement (Zulip's `notify_new_user`).
pub fn joined(user: &User) -> String {
    format!("{} joined this organization.", silent_mention(user))
}

/// The inviter's notice when an invitee joins.
pub fn accepted_invitation(user: &User) -> String {
    format!("{} accepted your invitation to join Zulip!", silent_mention(user))
}

/// Zulip's `get_unused_fence`: a backtick fence longer than any fence opening a line of
/// `content` (at least three).
pub fn unused_fence(content: &str) -> String {
    let longest = content
        .lines()
        .filter_map(|line| {
            let indent = line.len() - line.trim_start_matches(' ').len();
            let ticks = line[indent..].len() - line[indent..].trim_start_matches('`').len();
            (indent <= 3 && ticks >= 3).then_some(ticks + 1)
        })
        .max()
        .unwrap_or(3);
    "`".repeat(longest.max(3))
}

/// Zulip's `datetime_to_global_time`: a `<time:...>` the clients show in each reader's zone.
pub fn global_time(timestamp: i64) -> String {
    let time = chrono::DateTime::from_timestamp(timestamp, 0).unwrap_or_default();
    format!("<time:{}>", time.to_rfc3339())
}

/// Zulip's `pm_message_url`: the conversation as Zulip's `display_recipient` of the
/// message's recipient lists it (one-to-one: the recipient; a group: everyone).
pub fn direct_message_url(realm_url: &str, participants: &[UserId], sender: UserId, message: MessageId) -> String {
    let ids: Vec<UserId> = match participants {
        [a, b] => vec![if *a == sender { *b } else { *a }],
        other => other.to_vec(),
    };
    let slug = ids.iter().map(|id| id.0.to_string()).collect::<Vec<_>>().join(",");
    let kind = if ids.len() >= 3 { "group" } else { "dm" };
    format!("{realm_url}/#narrow/dm/{slug}-{kind}/near/{}", message.0)
}
