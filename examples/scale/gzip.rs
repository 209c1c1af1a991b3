//! Compression: the same large replies without and with `Accept-Encoding: gzip`, one
//! after the other: bytes on the wire, latency (the client's decoding aside) and the
//! server's CPU time per request.

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::*;

/// One reply, measured plain and gzipped.
pub struct Case {
    pub name: &'static str,
    pub plain: Side,
    pub gzip: Side,
}

#[derive(Default)]
pub struct Side {
    pub bytes: usize,
    pub latencies: Vec<Duration>,
    pub cpu: CpuUse,
}

impl Side {
    fn describe_latency(&self) -> String {
        Stats::new(self.latencies.clone()).percentile(50).map_or_else(|| "-".to_owned(), |d| format!("{:.2} ms", ms(d)))
    }

    fn cpu_us(&self) -> f64 {
        self.cpu.micros_per(self.latencies.len())
    }

    fn to_json(&self) -> Value {
        let stats = Stats::new(self.latencies.clone());
        json!({ "bytes": self.bytes, "p50_ms": ms_json(stats.percentile(50)), "p99_ms": ms_json(stats.percentile(99)),
                "cpu_us_per_request": round3(self.cpu_us()) })
    }
}

impl Case {
    pub fn describe(&self) -> String {
        format!(
            "{}: {} -> {} bytes ({:.1}%); latency p50 {} -> {}; server CPU {:.0} -> {:.0} µs/request",
            self.name,
            self.plain.bytes,
            self.gzip.bytes,
            100.0 * self.gzip.bytes as f64 / self.plain.bytes.max(1) as f64,
            self.plain.describe_latency(),
            self.gzip.describe_latency(),
            self.plain.cpu_us(),
            self.gzip.cpu_us()
        )
    }

    pub fn to_json(&self) -> Value {
        json!({ "case": self.name, "plain": self.plain.to_json(), "gzip": self.gzip.to_json() })
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// What one request does: its method, path and form.
struct Request {
    name: &'static str,
    post: bool,
    path: &'static str,
    form: Vec<(&'static str, &'static str)>,
}

/// `n` requests of each case as `who`, alternately plain and gzipped.
pub async fn measure(
    api: &Api,
    pid: u32,
    who: &Creds,
    full_register: &[(&'static str, &'static str)],
    n: usize,
) -> Result<Vec<Case>, BoxError> {
    let requests = [
        Request { name: "POST /register", post: true, path: "register", form: full_register.to_vec() },
        Request { name: "GET /users", post: false, path: "users", form: Vec::new() },
        Request {
            name: "GET /messages (100)",
            post: false,
            path: "messages",
            form: vec![("anchor", "newest"), ("num_before", "100"), ("num_after", "0")],
        },
    ];
    let mut cases = Vec::new();
    for request in &requests {
        let (mut plain, mut gzip) = (Side::default(), Side::default());
        for i in 0..2 * n {
            let side = if i % 2 == 0 { &mut plain } else { &mut gzip };
            let cpu = CpuMeter::start(Some(pid));
            let (latency, bytes, text) = once(api, who, request, i % 2 == 1).await?;
            side.cpu = side.cpu.plus(cpu.stop().unwrap_or_default());
            side.latencies.push(latency);
            side.bytes = bytes;
            if request.post {
                delete_queue(api, who, &text).await?;
            }
        }
        let case = Case { name: request.name, plain, gzip };
        eprintln!("  {}", case.describe());
        cases.push(case);
    }
    Ok(cases)
}

/// One request: its latency, the bytes received and the body (decoded).
async fn once(api: &Api, who: &Creds, request: &Request, gzip: bool) -> Result<(Duration, usize, String), BoxError> {
    let builder = if request.post {
        api.post(request.path, who).form(&request.form)
    } else {
        api.client.get(api.url(request.path)).basic_auth(&who.email, Some(&who.api_key)).query(&request.form)
    };
    let builder = if gzip { builder.header("Accept-Encoding", "gzip") } else { builder };
    let t0 = Instant::now();
    let response = builder.send().await?;
    let status = response.status();
    let encoding = response.headers().get("content-encoding").map(|v| v.as_bytes().to_vec());
    let body = response.bytes().await?;
    let latency = t0.elapsed();
    if gzip != (encoding.as_deref() == Some(b"gzip")) {
        return Err(format!("{}: Content-Encoding {encoding:?} (gzip asked: {gzip})", request.name).into());
    }
    let text = if gzip {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&body[..]).read_to_string(&mut text)?;
        text
    } else {
        String::from_utf8(body.to_vec())?
    };
    if !status.is_success() || !text.starts_with(r#"{"result":"success""#) {
        return Err(format!("{}: HTTP {status}: {}", request.name, &text[..text.len().min(300)]).into());
    }
    Ok((latency, body.len(), text))
}

async fn delete_queue(api: &Api, who: &Creds, register: &str) -> Result<(), BoxError> {
    let queue_id = register.split_once(r#""queue_id":""#).and_then(|(_, rest)| rest.split_once('"')).map(|(id, _)| id);
    let queue_id = queue_id.ok_or("register: no queue_id")?;
    let request = api.client.delete(api.url("events")).basic_auth(&who.email, Some(&who.api_key));
    request.form(&[("queue_id", queue_id)]).send().await?;
    Ok(())
}
