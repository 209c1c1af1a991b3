//! [`ModernBlocks`]: the modern `presences` JSON of the rows, cut in blocks of consecutive
//! update ids, each written once and reused by every reply until one of its rows changes.
//!
//! Every client pings once a minute with the `last_update_id` of its previous reply, so in
//! an organization where everyone is online each reply carries nearly every row (each
//! changed once in that minute). Built row by row, that is one small copy per row per
//! request; from the blocks it is one copy per block (rows changed in the same few
//! seconds), and only the block being filled and the one whose rows are moving on are
//! written again.
//!
//! A block holds the rows of everyone reported (see [`super::audience`]); replies for a
//! viewer whose view is limited are built row by row, as before. The actor tells the
//! blocks which update ids changed ([`ModernBlocks::changed`]) and when the reported users
//! changed ([`ModernBlocks::clear`]).

use std::collections::HashMap;

use bytes::Bytes;

use super::audience::UserSet;
use super::state::PresenceState;

/// Update ids per block: rows changed within a second or two of each other at 167 pings a
/// second, so few blocks are written again per second.
const BLOCK: i64 = 256;

/// The written blocks, by block number (`update_id / BLOCK`): each the members of its
/// reported rows, each member preceded by a comma (empty without any).
#[derive(Debug, Default)]
pub struct ModernBlocks {
    blocks: HashMap<i64, Bytes>,
}

impl ModernBlocks {
    /// A row with `update_id` appeared or went away: its block is written again when next
    /// needed.
    pub fn changed(&mut self, update_id: i64) {
        self.blocks.remove(&update_id.div_euclid(BLOCK));
    }

    /// The reported users changed: every block is written again when next needed.
    pub fn clear(&mut self) {
        self.blocks.clear();
    }

    /// The members of the modern `presences` object of the reported rows changed after
    /// `after` (without the braces), by ascending update id, appended to `out` in pieces
    /// (shared with the cache, not copied), and the largest update id among them (`None`
    /// without any).
    pub fn presences_after(
        &mut self,
        state: &PresenceState,
        reported: &UserSet,
        after: i64,
        out: &mut Vec<Bytes>,
    ) -> Option<i64> {
        let mut first = true;
        let mut push = |members: &Bytes| {
            if !members.is_empty() {
                // The first member of the object has no comma before it.
                out.push(if first { members.slice(1..) } else { members.clone() });
                first = false;
            }
        };
        let start = after.saturating_add(1);
        let mut next = start;
        // The first block, when the client's id falls inside it: only its later rows.
        if start.rem_euclid(BLOCK) != 0 {
            let end = start.div_euclid(BLOCK).saturating_add(1).saturating_mul(BLOCK);
            push(&members(state, reported, start, end));
            next = end;
        }
        // Then each block holding a row, jumping over the empty ones.
        while let Some(row) = state.rows_after(next.saturating_sub(1)).next() {
            let block = row.update_id.div_euclid(BLOCK);
            let begin = block.saturating_mul(BLOCK);
            let end = begin.saturating_add(BLOCK);
            push(self.blocks.entry(block).or_insert_with(|| members(state, reported, begin, end)));
            if end <= next {
                break;
            }
            next = end;
        }
        state.rows_after_rev(after).find(|row| reported.contains(row.user_id)).map(|row| row.update_id)
    }
}

/// The modern members of the reported rows with update ids in `start..end`, each preceded
/// by a comma.
fn members(state: &PresenceState, reported: &UserSet, start: i64, end: i64) -> Bytes {
    let mut out = String::new();
    for row in state.rows_between(start, end).filter(|row| reported.contains(row.user_id)) {
        out.push(',');
        out.push_str(row.modern_member());
    }
    Bytes::from(out)
}
