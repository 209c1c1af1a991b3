//! The web client's files (`web/`): embedded in the binary, served under a version made of
//! their content hash (`/static/<version>/<file>`) so that a browser may keep them for a
//! year and still never runs a mix of two versions; gzip-compressed once, on first use.
//! Modules import one another by relative paths, which stay under the same version.

use std::io::Write;
use std::sync::OnceLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use flate2::write::GzEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};

/// One embedded file.
pub struct Asset {
    pub name: &'static str,
    pub bytes: &'static [u8],
}

macro_rules! assets {
    ($($name:literal),* $(,)?) => {
        &[$(Asset { name: $name, bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/", $name)) }),*]
    };
}

/// Every file of `web/` (a test checks that the list and the directory agree).
pub const ASSETS: &[Asset] = assets![
    "actions.js",
    "api.js",
    "app.css",
    "app.js",
    "channels.js",
    "compose.js",
    "dom.js",
    "events.js",
    "feed.js",
    "narrow.js",
    "pages.css",
    "people.js",
    "settings.js",
    "sidebar.js",
    "store.js",
    "ui.js",
    "views.js",
];

/// The files with their compressed forms, and the version that names them all.
struct Served {
    version: String,
    gzipped: Vec<bytes::Bytes>,
}

fn served() -> &'static Served {
    static SERVED: OnceLock<Served> = OnceLock::new();
    SERVED.get_or_init(|| {
        let mut hasher = Sha256::new();
        for asset in ASSETS {
            hasher.update(asset.name.as_bytes());
            hasher.update((asset.bytes.len() as u64).to_le_bytes());
            hasher.update(asset.bytes);
        }
        let version = hasher.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect();
        let gzipped = ASSETS.iter().map(|asset| bytes::Bytes::from(gzip(asset.bytes))).collect();
        Served { version, gzipped }
    })
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 3 + 64), Compression::best());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

/// The version of the files: the start of the SHA-256 of them all.
pub fn version() -> &'static str {
    &served().version
}

/// The URL of a file of `web/`.
pub fn url(name: &str) -> String {
    format!("/static/{}/{name}", version())
}

/// The bytes of all files, and of all of them gzipped (for the figures in docs/benchmarks.md).
pub fn sizes() -> (usize, usize) {
    let plain = ASSETS.iter().map(|a| a.bytes.len()).sum();
    (plain, served().gzipped.iter().map(bytes::Bytes::len).sum())
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// Registers `/static/{version}/{name}`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        super::routes::listed(&["GET"], "/static/{version}/{name}")
            .route(web::get().to(serve))
            .route(web::head().to(serve)),
    );
}

/// A file of this version, kept by the browser for a year; a file asked for under another
/// version (a page from before an upgrade) is this version's, not to be kept.
async fn serve(req: HttpRequest, path: web::Path<(String, String)>) -> HttpResponse {
    let (asked_version, name) = path.into_inner();
    let Some(index) = ASSETS.iter().position(|a| a.name == name) else {
        return HttpResponse::NotFound().content_type("text/plain; charset=utf-8").body("Not found\n");
    };
    let cache = if asked_version == version() { "public, max-age=31536000, immutable" } else { "no-cache" };
    let gzip_ok = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim().split(';').next() == Some("gzip")));
    let mut response = HttpResponse::Ok();
    response
        .insert_header((header::CONTENT_TYPE, content_type(&name)))
        .insert_header((header::CACHE_CONTROL, cache))
        .insert_header((header::VARY, "Accept-Encoding"))
        .insert_header(("X-Content-Type-Options", "nosniff"));
    if gzip_ok {
        response.insert_header((header::CONTENT_ENCODING, HeaderValue::from_static("gzip")));
        response.body(served().gzipped[index].clone())
    } else {
        response.body(ASSETS[index].bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_web_is_served_and_nothing_else() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| !name.starts_with('.'))
            .collect();
        on_disk.sort();
        let mut listed: Vec<&str> = ASSETS.iter().map(|a| a.name).collect();
        listed.sort();
        assert_eq!(on_disk, listed);
    }

    #[test]
    fn the_version_names_the_content() {
        assert_eq!(version().len(), 12);
        assert!(url("app.js").ends_with("/app.js"));
        let (plain, gzipped) = sizes();
        assert!(gzipped < plain);
    }
}
