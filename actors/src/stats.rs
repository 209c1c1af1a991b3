//! Figures of the running organizations, for the metrics endpoint and `agora stats`: read
//! from what the realms share with the HTTP layer (no hop through a realm actor), and the
//! presence actors' counters.

use std::time::Duration;

use crate::ids::RealmId;
use crate::presence::{GetPresenceStats, PresenceStats};
use crate::registry::Realms;

/// How long a presence actor may take to report.
const PRESENCE_TIMEOUT: Duration = Duration::from_secs(2);

/// One running organization's figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealmFigures {
    pub realm_id: RealmId,
    pub subdomain: String,
    /// Active accounts (humans and bots).
    pub active_users: usize,
    /// Open event queues.
    pub event_queues: usize,
    /// Long-polls waiting on them.
    pub waiting_polls: usize,
    /// Requests sent to the organization's actor and not answered yet.
    pub mailbox: usize,
    /// The presence actor's counters (`None` if it did not answer in time).
    pub presence: Option<PresenceStats>,
}

/// The figures of every running organization, by subdomain.
pub async fn running(realms: &Realms) -> Vec<RealmFigures> {
    let mut handles = realms.directory.running();
    handles.sort_by_key(|h| h.id);
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        let state = handle.state();
        let presence = handle.presence.send(GetPresenceStats).timeout(PRESENCE_TIMEOUT).await.ok();
        out.push(RealmFigures {
            realm_id: handle.id,
            subdomain: state.realm().subdomain.clone(),
            active_users: state.users().filter(|u| u.is_active).count(),
            event_queues: handle.queues.len(),
            waiting_polls: handle.queues.waiting_polls(),
            mailbox: handle.addr.in_flight(),
            presence,
        });
    }
    out
}
