//! **Test support only** (feature `test-support`): accounts as fixtures, the way Zulip's
//! tests find their users already there: the account alone, without the default channels
//! and the system bots' messages a real new member gets (so that tests of other features
//! start from an empty history).

use actix::prelude::*;

use crate::error::ApiResult;
use crate::realm::actor::RealmActor;
use crate::realm::users::create::plan_create_user;
use crate::realm::users::{CreatedUser, NewUser};

/// Test support: creates an account without onboarding it.
#[derive(Message, Debug, Clone)]
#[rtype(result = "ApiResult<CreatedUser>")]
pub struct CreateFixtureUser(pub NewUser);

impl Handler<CreateFixtureUser> for RealmActor {
    type Result = ApiResult<CreatedUser>;

    fn handle(&mut self, msg: CreateFixtureUser, _: &mut Self::Context) -> Self::Result {
        let change = plan_create_user(&self.state, &self.config, &msg.0, crate::clock::now())?;
        self.commit(change)
    }
}
