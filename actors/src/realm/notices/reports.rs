//! Message reports: `POST /messages/{message_id}/report` (Zulip's `report_message_backend`
//! and `send_message_report`). Notification Bot posts the report, in Zulip's words, to the
//! organization's `moderation_request_channel_id`, topic "<sender's name> moderation".

use actix::prelude::*;
use rusqlite::Connection;

use super::texts::{direct_message_url, global_time, message_link, silent_mention, unused_fence};
use super::{bot, notice_topic, setting_channel};
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::reader::HistoryRead;
use crate::realm::actor::RealmActor;
use crate::realm::chat::changes::access_message;
use crate::realm::chat::format::dm_participants;
use crate::realm::chat::send::{truncate, Notice, NoticeTo};
use crate::realm::chat::viewer;
use crate::realm::model::{SystemBot, User};
use crate::realm::state::RealmState;
use crate::store::reactions::MessageRow;

pub use crate::realm::catalog::REPORT_REASONS;

/// Zulip's `MAX_REPORT_MESSAGE_EXPLANATION_LENGTH`.
pub const MAX_DESCRIPTION_LENGTH: usize = 1000;

/// Zulip's `MAX_REPORT_MESSAGE_SNIPPET_LENGTH`: the message length less the description's
/// and 500 for the rest of the report.
const MAX_SNIPPET_LENGTH: usize = 10_000 - MAX_DESCRIPTION_LENGTH - 500;

/// `POST /messages/{message_id}/report`.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<()>")]
pub struct ReportMessage {
    pub user_id: UserId,
    pub message_id: MessageId,
    pub report_type: String,
    /// Zulip's default is empty.
    pub description: String,
}

/// The reported message, read with the reporter's access (a history read).
struct ReportedMessage {
    user_id: UserId,
    message_id: MessageId,
}

impl HistoryRead for ReportedMessage {
    type Output = MessageRow;

    fn run(self, state: &RealmState, conn: &Connection) -> ApiResult<MessageRow> {
        let user = viewer(state, self.user_id)?;
        Ok(access_message(state, conn, user, self.message_id)?.message)
    }
}

/// The checks Zulip makes before reading the message: the report type and description,
/// then that the organization has a moderation request channel.
fn check_report(state: &RealmState, msg: &ReportMessage) -> ApiResult<ChannelId> {
    if !REPORT_REASONS.iter().any(|(kind, _)| *kind == msg.report_type) {
        return Err(ApiError::bad_request("Invalid report_type"));
    }
    ApiError::check_length("description", &msg.description, MAX_DESCRIPTION_LENGTH)?;
    if msg.report_type == "other" && msg.description.is_empty() {
        return Err(ApiError::bad_request("An explanation is required."));
    }
    setting_channel(state, "moderation_request_channel_id")
        .ok_or_else(|| ApiError::bad_request("Message reporting is not enabled in this organization."))
}

/// The report's text (Zulip's `send_message_report`).
fn report_text(
    state: &RealmState,
    realm_url: &str,
    reporter: &User,
    message: &MessageRow,
    report_type: &str,
    description: &str,
) -> String {
    let sender = state.user(message.sender_id);
    let sender_mention = sender.map(silent_mention).unwrap_or_default();
    let reporter_mention = silent_mention(reporter);
    let sent = global_time(message.date_sent);
    let reason = REPORT_REASONS.iter().find(|(kind, _)| *kind == report_type).map_or("", |(_, reason)| reason);
    let participants = dm_participants(message.dm_key.as_deref().unwrap_or(""));
    let (header, original) = match message.channel_id.and_then(|c| state.channel(c)) {
        Some(channel) => (
            format!("{reporter_mention} reported a message sent by {sender_mention} at {sent}."),
            format!("Original message at {}", message_link(channel.id, &channel.name, &message.topic, message.id)),
        ),
        None => {
            let url = direct_message_url(realm_url, &participants, message.sender_id, message.id);
            let header = if participants.len() <= 2 {
                if message.sender_id != reporter.id {
                    format!("{reporter_mention} reported a direct message sent by {sender_mention} at {sent}.")
                } else {
                    // Reporting one's own message names who it went to.
                    let to = participants.iter().find(|id| **id != reporter.id).and_then(|id| state.user(*id));
                    let to = to.map_or_else(|| reporter_mention.clone(), silent_mention);
                    format!("{reporter_mention} reported a direct message sent by {sender_mention} to {to} at {sent}.")
                }
            } else {
                let mut others: Vec<String> = participants
                    .iter()
                    .filter(|id| **id != message.sender_id)
                    .filter_map(|id| state.user(*id))
                    .map(silent_mention)
                    .collect();
                others.sort();
                let last = others.pop().unwrap_or_default();
                let mut list = others.join(", ");
                if others.len() > 1 {
                    list.push(',');
                }
                format!("{reporter_mention} reported a direct message sent by {sender_mention} to {list} and {last} at {sent}.")
            };
            (header, format!("[Original message]({url})"))
        }
    };
    let snippet = truncate(&message.content, MAX_SNIPPET_LENGTH, "\n[message truncated]");
    let fence = unused_fence(&snippet);
    let text = format!(
        "{header}\n```quote\n**{reason}**. {description}\n```\n\n{fence} spoiler {original}\n{snippet}\n{fence}\n"
    );
    text.trim_end().to_owned()
}

impl Handler<ReportMessage> for RealmActor {
    /// The message is read on the reader threads (with the reporter's access), then the
    /// report is posted.
    type Result = ResponseActFuture<Self, ApiResult<()>>;

    fn handle(&mut self, msg: ReportMessage, _: &mut Self::Context) -> Self::Result {
        let read = match check_report(&self.state, &msg) {
            Ok(_) => self.read(ReportedMessage { user_id: msg.user_id, message_id: msg.message_id }),
            Err(e) => return Box::pin(fut::ready(Err(e))),
        };
        Box::pin(read.into_actor(self).map(move |message, actor, _| {
            let message = message?;
            let state = &actor.state;
            let channel = check_report(state, &msg)?;
            let reporter = viewer(state, msg.user_id)?;
            let sender = bot(state, SystemBot::NOTIFICATION_BOT).ok_or_else(ApiError::internal)?;
            let realm_url = actor.config.realm_url(&state.realm().subdomain);
            let content = report_text(state, &realm_url, reporter, &message, &msg.report_type, &msg.description);
            let name = state.user(message.sender_id).map(|u| u.full_name.clone()).unwrap_or_default();
            let topic = notice_topic(state, channel, &format!("{name} moderation"));
            actor.post_notices(vec![Notice::new(sender, NoticeTo::Channel(channel, topic), content)]);
            Ok(())
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_longer_than_any_in_the_message() {
        assert_eq!(unused_fence("plain"), "```");
        assert_eq!(unused_fence("```\ncode\n```"), "````");
        assert_eq!(unused_fence("  `````py\nx"), "``````");
        assert_eq!(unused_fence("    ````\nindented code"), "```");
    }

    #[test]
    fn times_are_global() {
        assert_eq!(global_time(0), "<time:1970-01-01T00:00:00+00:00>");
    }

    #[test]
    fn direct_message_links_name_the_recipient_or_the_group() {
        let url = |p: &[i64], s: i64| {
            let p: Vec<UserId> = p.iter().copied().map(UserId).collect();
            direct_message_url("http://x", &p, UserId(s), MessageId(9))
        };
        assert_eq!(url(&[3, 7], 3), "http://x/#narrow/dm/7-dm/near/9");
        assert_eq!(url(&[3, 7], 7), "http://x/#narrow/dm/3-dm/near/9");
        assert_eq!(url(&[3], 3), "http://x/#narrow/dm/3-dm/near/9");
        assert_eq!(url(&[3, 5, 7], 5), "http://x/#narrow/dm/3,5,7-group/near/9");
    }
}
