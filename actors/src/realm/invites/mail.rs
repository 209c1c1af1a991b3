//! The invitation mail (Zulip's `zerver/emails/invitation` templates, plain text) and the
//! links it carries.

use crate::config::ServerConfig;
use crate::realm::invite_data::Invite;
use crate::realm::model::User;
use crate::realm::state::RealmState;
use crate::secrets::random_alphanumeric;
use crate::store::outbox::NewMail;

/// The link of an invitation: `/accounts/do_confirm/<key>` for an email invitation,
/// `/join/<key>/` for a reusable one (Zulip's URLs).
pub fn invite_link(config: &ServerConfig, state: &RealmState, invite: &Invite) -> String {
    let realm_url = config.realm_url(&state.realm().subdomain);
    if invite.multiuse {
        format!("{realm_url}/join/{}/", invite.key)
    } else {
        format!("{realm_url}/accounts/do_confirm/{}", invite.key)
    }
}

/// The mail of an email invitation from `referrer`.
pub fn invitation_mail(state: &RealmState, config: &ServerConfig, referrer: &User, invite: &Invite) -> NewMail {
    let realm_name = &state.realm().name;
    let link = invite_link(config, state, invite);
    let subject = format!("{} has invited you to join {realm_name}", referrer.full_name);
    let body = format!(
        "Hi there,\n\n\
         {name} ({email}) wants you to join them on Zulip -- the team communication tool designed for productivity.\n\n\
         To get started, click the link below.\n    <{link}>\n\n\
         If you have any questions, please contact this Zulip server's administrators at {support}.\n",
        name = referrer.full_name,
        email = referrer.delivery_email,
        support = config.invites.support_email,
    );
    NewMail {
        realm_id: Some(state.realm().id),
        kind: "invitation".to_owned(),
        to: invite.email.clone().unwrap_or_default(),
        from_name: realm_name.clone(),
        subject,
        body,
        message_id: format!("{}.invitation@{}", random_alphanumeric(24), config.fake_email_domain("")),
    }
}
