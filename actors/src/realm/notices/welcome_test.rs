//! `POST /realm/test_welcome_bot_custom_message` (Zulip's
//! `send_test_welcome_bot_custom_message`): Welcome Bot sends the acting administrator the
//! custom part of its welcome, with the text given, as a new member would get it.

use actix::prelude::*;

use super::{bot, texts};
use crate::error::{ApiError, ApiResult};
use crate::ids::{MessageId, UserId};
use crate::realm::actor::RealmActor;
use crate::realm::chat::send::{plan_notice, Notice, NoticeTo, PlannedMessage};
use crate::realm::model::SystemBot;
use crate::realm::permissions::require_admin;
use crate::realm::state::RealmState;

/// Zulip's `Realm.MAX_REALM_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH`.
pub const MAX_WELCOME_TEXT_LENGTH: usize = 8000;

/// `POST /realm/test_welcome_bot_custom_message`: replies with the message's id.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<MessageId>")]
pub struct TestWelcomeBotCustomMessage {
    pub acting: UserId,
    /// `welcome_message_custom_text`, as given.
    pub text: String,
}

/// Plans the test message: an administrator, a text of at most 8000 characters, not empty
/// (Zulip's checks, in its order); only the custom part, unstarred, is sent (Zulip's
/// `internal_send_private_message`, without notifications to phones or by email).
pub fn plan_test_message(
    state: &RealmState,
    msg: TestWelcomeBotCustomMessage,
    public_listeners: &std::collections::BTreeSet<UserId>,
    now: i64,
) -> ApiResult<PlannedMessage> {
    require_admin(state.user_or_err(msg.acting)?.role)?;
    ApiError::check_length("welcome_message_custom_text", &msg.text, MAX_WELCOME_TEXT_LENGTH)?;
    if msg.text.is_empty() {
        return Err(ApiError::bad_request("Message must not be empty"));
    }
    let sender = bot(state, SystemBot::WELCOME_BOT).ok_or_else(ApiError::internal)?;
    let notice = Notice::new(sender, NoticeTo::Direct(vec![msg.acting]), texts::welcome_custom(&msg.text));
    plan_notice(state, notice, public_listeners, now)
}

impl Handler<TestWelcomeBotCustomMessage> for RealmActor {
    type Result = ApiResult<MessageId>;

    fn handle(&mut self, msg: TestWelcomeBotCustomMessage, _: &mut Self::Context) -> Self::Result {
        let listeners = self.all_public_streams_listeners();
        let change = plan_test_message(&self.state, msg, &listeners, crate::clock::now())?;
        Ok(self.commit(change)?.id)
    }
}
