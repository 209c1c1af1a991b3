//! Code playgrounds (`/realm/playgrounds`, `/realm/playgrounds/{playground_id}`); the list
//! itself comes with `POST /register` (`realm_playgrounds`).

use actix_web::http::Method;
use actix_web::{web, Scope};
use agora_actors::json_object;
use agora_actors::realm::playgrounds::{AddPlayground, RemovePlayground};
use serde_json::json;

use super::{path_id, Endpoint};
use crate::http::guard::{Admins, Guarded};
use crate::http::response::{HttpError, Success};

/// The playground endpoints.
pub(super) fn routes(scope: Scope) -> Scope {
    scope.service(Endpoint::new("/realm/playgrounds").route(Method::POST, add_playground).build()).service(
        Endpoint::new(r"/realm/playgrounds/{playground_id:\d+}").route(Method::DELETE, remove_playground).build(),
    )
}

/// `POST /realm/playgrounds` (administrators: Zulip checks the role before any parameter):
/// `name`, `pygments_language` and `url_template`; replies with the new playground's `id`.
async fn add_playground(req: Guarded<Admins>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    let name = params.required_str("name")?;
    let pygments_language = params.required_str("pygments_language")?;
    let url_template = params.str("url_template");
    let msg = AddPlayground { acting: auth.user.user_id, name, pygments_language, url_template };
    let id = auth.realm.addr.send(msg).await??;
    Ok(params.success(json_object(json!({ "id": id }))))
}

/// `DELETE /realm/playgrounds/{playground_id}` (administrators).
async fn remove_playground(req: Guarded<Admins>, path: web::Path<String>) -> Result<Success, HttpError> {
    let Guarded { auth, params, .. } = req;
    auth.realm.addr.send(RemovePlayground { acting: auth.user.user_id, id: path_id(&path) }).await??;
    Ok(params.ok())
}
