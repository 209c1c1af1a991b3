//! Messages the server sends itself, from a system bot (Zulip's `internal_send_*`): no
//! permission checks (a system bot may post anywhere), no automatic topic follow, and the
//! flags the notice asks for (read for the user whose action it reports, starred...).

use std::collections::BTreeSet;

use super::PlannedMessage;
use crate::error::{ApiError, ApiResult};
use crate::ids::{ChannelId, MessageId, UserId};
use crate::realm::chat::flag;
use crate::realm::chat::format::dm_key;
use crate::realm::chat::render::render;
use crate::realm::chat::send::content::normalize_content;
use crate::realm::chat::send::events::all_public_streams_audience;
use crate::realm::chat::send::mentions::{mentioned_group_members, recipient_flags};
use crate::realm::state::RealmState;

/// Where a notice goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeTo {
    /// A channel's topic (as it will be stored).
    Channel(ChannelId, String),
    /// A direct message to these users (the sender aside).
    Direct(Vec<UserId>),
}

/// A notice to send and the flags its recipients get besides the mentions.
#[derive(Debug, Clone)]
pub struct Notice {
    pub sender: UserId,
    pub to: NoticeTo,
    pub content: String,
    /// Recipients who get it already read (the user whose action it reports).
    pub read_for: Vec<UserId>,
    /// When set, everyone else but these gets it read (Zulip's `limit_unread_user_ids`).
    pub unread_only: Option<BTreeSet<UserId>>,
    /// Recipients who get it starred (Welcome Bot's messages).
    pub starred_for: Vec<UserId>,
    /// It may go to an archived channel (Zulip's `archived_channel_notice`: the notices
    /// about the channel itself).
    pub archived_ok: bool,
}

impl Notice {
    /// A notice with no special flags.
    pub fn new(sender: UserId, to: NoticeTo, content: String) -> Notice {
        Notice {
            sender,
            to,
            content,
            read_for: Vec::new(),
            unread_only: None,
            starred_for: Vec::new(),
            archived_ok: false,
        }
    }
}

/// Plans a notice. A missing channel, or an archived one unless the notice may go there,
/// is refused (the caller logs and goes on: a notice never fails what it reports).
pub fn plan_notice(
    state: &RealmState,
    notice: Notice,
    public_listeners: &BTreeSet<UserId>,
    now: i64,
) -> ApiResult<PlannedMessage> {
    let sender = state.user_or_err(notice.sender)?;
    let content = normalize_content(&notice.content)?;
    let rendered = render(state, &content);
    let group_members = mentioned_group_members(state, &rendered);
    let (channel, topic, dm, recipients, base) = match &notice.to {
        NoticeTo::Channel(id, topic) => {
            let channel = state
                .channel(*id)
                .filter(|c| !c.is_archived || notice.archived_ok)
                .ok_or_else(|| ApiError::bad_request("Invalid channel ID"))?;
            let mut users: BTreeSet<UserId> =
                state.subscribers(channel.id).filter(|u| state.user(*u).is_some_and(|u| u.is_active)).collect();
            users.insert(sender.id);
            (Some(channel), topic.clone(), None, users.into_iter().collect::<Vec<_>>(), 0)
        }
        NoticeTo::Direct(users) => {
            let mut all: BTreeSet<UserId> = users.iter().copied().collect();
            all.insert(sender.id);
            let all: Vec<UserId> = all.into_iter().collect();
            (None, String::new(), Some(dm_key(&all)), all, flag::IS_PRIVATE)
        }
    };
    let participants = BTreeSet::from([sender.id]);
    let mut flags = recipient_flags(sender.id, &recipients, &rendered, &group_members, &participants, base, true);
    for (user, bits) in &mut flags {
        let read =
            notice.read_for.contains(user) || notice.unread_only.as_ref().is_some_and(|only| !only.contains(user));
        if read {
            *bits |= flag::READ;
        }
        if notice.starred_for.contains(user) {
            *bits |= flag::STARRED;
        }
    }
    let public_audience =
        channel.map(|c| all_public_streams_audience(state, c, &recipients, public_listeners)).unwrap_or_default();
    Ok(PlannedMessage {
        realm_id: state.realm().id,
        sender: sender.id,
        channel_id: channel.map(|c| c.id),
        follow: None,
        topic,
        content,
        rendered,
        dm_key: dm,
        client: "Internal".to_owned(),
        date_sent: now,
        recipients,
        flags,
        needs_conversation: None,
        // System bots may start topics anywhere.
        new_topic_refusal: None,
        refusal: None,
        may_mention_anyone: true,
        public_audience,
        echo: None,
        // Notices link no upload.
        claims: Default::default(),
        widget: None,
        id: MessageId(0),
        automatic: None,
        widget_id: None,
        dm_group: None,
    })
}
