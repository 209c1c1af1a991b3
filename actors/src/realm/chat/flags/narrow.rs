//! `POST /messages/flags/narrow` (Zulip's `update_message_flags_for_narrow`): a flag
//! change on an anchored range of a narrow, using the query of `GET /messages` and the
//! flag operation of `POST /messages/flags`.

use actix::prelude::*;
use rusqlite::Connection;
use serde_json::{json, Map, Value};

use super::{plan_flags, FlagChange};
use crate::error::{ApiError, ApiResult};
use crate::ids::{MessageId, UserId};
use crate::reader::HistoryRead;
use crate::realm::actor::RealmActor;
use crate::realm::chat::fetch::{fetch_window, Range, Window, MAX_MESSAGES_PER_FETCH};
use crate::realm::chat::narrow::{self, NarrowTerm};
use crate::realm::chat::viewer;
use crate::realm::state::RealmState;
use crate::store::narrow::Filter;

/// `POST /messages/flags/narrow`.
#[derive(Message, Debug)]
#[rtype(result = "ApiResult<Map<String, Value>>")]
pub struct UpdateFlagsForNarrow {
    pub user_id: UserId,
    pub range: Range,
    pub narrow: Vec<NarrowTerm>,
    pub op: String,
    pub flag: String,
}

/// Zulip's bounds on the range: an excluded anchor only at one end, and at most 5000
/// messages (`num_before` keeps at least half of them when both sides ask for more).
pub fn clamp_range(range: Range) -> ApiResult<Range> {
    if range.num_before > 0 && range.num_after > 0 && !range.include_anchor {
        return Err(ApiError::bad_request("The anchor can only be excluded at an end of the range"));
    }
    let max = MAX_MESSAGES_PER_FETCH;
    let num_before = range.num_before.min((max - range.num_after).max(max / 2));
    let num_after = range.num_after.min(max - num_before);
    Ok(Range { num_before, num_after, ..range })
}

/// The messages of a range of a narrow already built (a history read).
struct NarrowWindow {
    filter: Filter,
    range: Range,
}

impl HistoryRead for NarrowWindow {
    type Output = Window;

    fn run(self, _: &RealmState, conn: &Connection) -> ApiResult<Window> {
        fetch_window(conn, &self.filter, self.range)
    }
}

impl Handler<UpdateFlagsForNarrow> for RealmActor {
    /// Not atomic: the range is read on the reader threads while this actor goes on with
    /// other messages; the flags are then changed on the messages read, as Zulip does
    /// (its read and its update are separate transactions too).
    type Result = ResponseActFuture<Self, ApiResult<Map<String, Value>>>;

    fn handle(&mut self, msg: UpdateFlagsForNarrow, _: &mut Self::Context) -> Self::Result {
        let planned = clamp_range(msg.range).and_then(|range| {
            let user = viewer(&self.state, msg.user_id)?;
            Ok(NarrowWindow { filter: narrow::build(&self.state, user, &msg.narrow)?.filter, range })
        });
        let read = match planned {
            Ok(query) => self.read(query),
            Err(e) => return Box::pin(fut::ready(Err(e))),
        };
        let (user_id, flag, op) = (msg.user_id, msg.flag, msg.op);
        Box::pin(read.into_actor(self).map(move |window, actor, _| {
            let window = window?;
            let ids: Vec<MessageId> = window.rows.iter().map(|(row, _)| row.id).collect();
            let change = FlagChange::parse(&flag, &op)?;
            let outcome = actor.commit(plan_flags(&actor.state, user_id, change, ids.clone())?)?;
            let mut data = Map::new();
            data.insert("processed_count".into(), json!(ids.len()));
            data.insert("updated_count".into(), json!(outcome.changed.len()));
            data.insert("first_processed_id".into(), json!(ids.first()));
            data.insert("last_processed_id".into(), json!(ids.last()));
            data.insert("found_oldest".into(), json!(window.found_oldest));
            data.insert("found_newest".into(), json!(window.found_newest));
            data.insert("ignored_because_not_subscribed_channels".into(), json!(outcome.ignored_channels));
            Ok(data)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realm::chat::fetch::Anchor;

    fn range(num_before: i64, num_after: i64, include_anchor: bool) -> Range {
        Range { anchor: Anchor::Newest, num_before, num_after, include_anchor }
    }

    fn sides(r: ApiResult<Range>) -> (i64, i64) {
        r.map(|r| (r.num_before, r.num_after)).unwrap_or((-1, -1))
    }

    #[test]
    fn ranges_are_clamped_as_zulip_does() {
        assert_eq!(sides(clamp_range(range(10, 20, true))), (10, 20));
        assert_eq!(sides(clamp_range(range(6000, 0, true))), (5000, 0));
        assert_eq!(sides(clamp_range(range(0, 6000, true))), (0, 5000));
        assert_eq!(sides(clamp_range(range(4000, 4000, true))), (2500, 2500));
        assert_eq!(sides(clamp_range(range(1000, 9000, true))), (1000, 4000));
        assert_eq!(sides(clamp_range(range(9000, 1000, true))), (4000, 1000));
    }

    #[test]
    fn an_excluded_anchor_must_be_at_an_end() {
        assert_eq!(sides(clamp_range(range(5, 0, false))), (5, 0));
        let err = clamp_range(range(1, 1, false)).unwrap_err();
        assert_eq!(err.msg, "The anchor can only be excluded at an end of the range");
    }
}
