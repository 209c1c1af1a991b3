//! gzip for large API replies, when the client accepts it (`Accept-Encoding: gzip`, which
//! the Python client and the apps send).
//!
//! Measured on a 10,000-user organization's replies (see docs/benchmarks.md): at level
//! 1 with flate2's default backend a full `POST /register` (5.4 MB) becomes 9% of its size
//! in 9 ms, `GET /users` (3.1 MB) 5% in 3 ms, 100 messages (47 KB) 8% in 0.06 ms; higher
//! levels took 2-6 times as long for at most 15% fewer bytes. Small bodies are sent as they
//! are (one TCP segment either way), and so are the replies of long-polls unless they carry
//! a backlog: compressing one event would cost about as much CPU as delivering it.

use std::io::Write;

use actix_web::http::header::{self, HeaderValue};
use actix_web::HttpRequest;
use flate2::write::GzEncoder;
use flate2::Compression;

/// The compression level (1: fastest; see the module's documentation).
pub const LEVEL: u32 = 1;

/// Bodies shorter than this are never compressed.
pub const MIN_BYTES: usize = 1400;

/// `GET /events` replies shorter than this are never compressed.
pub const MIN_EVENTS_BYTES: usize = 16 * 1024;

/// Whether the request's `Accept-Encoding` accepts gzip: `gzip` (or `x-gzip`) with a
/// non-zero quality, or else `*` with one.
pub fn accepts_gzip(req: &HttpRequest) -> bool {
    let mut gzip = None;
    let mut any = None;
    let items =
        req.headers().get_all(header::ACCEPT_ENCODING).filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(','));
    for item in items {
        let mut fields = item.split(';');
        let coding = fields.next().unwrap_or("").trim();
        let quality = fields
            .filter_map(|f| f.trim().strip_prefix("q=").or_else(|| f.trim().strip_prefix("Q=")))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            gzip = Some(quality > 0.0);
        } else if coding == "*" {
            any = Some(quality > 0.0);
        }
    }
    gzip.or(any).unwrap_or(false)
}

/// `pieces` (`total` bytes) as one gzip stream; `None` if the encoder fails.
pub fn gzip<'a>(pieces: impl IntoIterator<Item = &'a [u8]>, total: usize) -> Option<Vec<u8>> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(total / 8 + 64), Compression::new(LEVEL));
    for piece in pieces {
        encoder.write_all(piece).ok()?;
    }
    encoder.finish().ok()
}

/// Marks a reply as gzipped.
pub fn mark_gzipped(headers: &mut header::HeaderMap) {
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn accepts(value: &str) -> bool {
        accepts_gzip(&TestRequest::default().insert_header((header::ACCEPT_ENCODING, value)).to_http_request())
    }

    #[test]
    fn accept_encoding_is_read_with_its_qualities() {
        assert!(accepts("gzip"));
        assert!(accepts("gzip, deflate, br"));
        assert!(accepts("br;q=1.0, GZip;q=0.5"));
        assert!(accepts("x-gzip"));
        assert!(accepts("*"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("gzip;q=0, *"));
        assert!(!accepts("deflate, br"));
        assert!(!accepts("identity"));
        assert!(!accepts_gzip(&TestRequest::default().to_http_request()));
    }

    #[test]
    fn pieces_make_one_stream() {
        let text = r#"{"result":"success","msg":"","users":[]}"#.repeat(100);
        let (a, b) = text.as_bytes().split_at(1234);
        let packed = gzip([a, b], text.len()).unwrap();
        let mut out = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&packed[..]), &mut out).unwrap();
        assert_eq!(out, text);
        assert!(packed.len() < text.len() / 10);
    }
}
