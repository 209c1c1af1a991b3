//! Upload load generator. Starts its own server (`target/<profile>/agora`, next to this
//! example's directory) on a fresh temporary data directory and measures, as the
//! organization's owner:
//! - one large file (`--large-mib`, 20 by default) uploaded and downloaded `--rounds`
//!   times: throughput of each, and the server's resident memory sampled every 5 ms during
//!   each upload (its peak against the memory before: a file streamed to disk keeps it
//!   flat);
//! - `--small-files` files of `--small-kib` uploaded, then downloaded, `--concurrency` at a
//!   time: files per second and latency;
//! - the thumbnail of a 4000x3000 photo (a JPEG made here): in this process with the
//!   server's own function (`agora_actors::uploads::images::thumbnail`), and end to end
//!   (upload answered to thumbnail served by the server's worker).
//!
//! ```text
//! cargo build --release && cargo run --release --example uploadload
//! ```
//!
//! Progress goes to stderr; the report and a final JSON summary line go to stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::RngCore;
use reqwest::multipart::{Form, Part};
use serde_json::json;
use tokio::task::JoinSet;

#[path = "support/mod.rs"]
mod support;
use support::*;

/// Load generator for Agora's uploads (POST /user_uploads, GET /user_uploads/..., thumbnails).
#[derive(Debug, Parser)]
#[command(name = "uploadload")]
struct Args {
    /// Size of the large file, in MiB
    #[arg(long, default_value_t = 20)]
    large_mib: usize,
    /// Uploads and downloads of the large file
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Number of small files
    #[arg(long, default_value_t = 1000)]
    small_files: usize,
    /// Size of each small file, in KiB
    #[arg(long, default_value_t = 8)]
    small_kib: usize,
    /// Small files in flight at once
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Thumbnails of the 4000x3000 photo timed
    #[arg(long, default_value_t = 3)]
    thumbnails: usize,
    /// Server binary to start [default: target/<profile>/agora, next to the examples directory]
    #[arg(long, value_name = "PATH")]
    server_bin: Option<PathBuf>,
    /// Server's log filter (`--log`)
    #[arg(long, value_name = "FILTER", default_value = "warn")]
    server_log: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    support::main_with("uploadload", run(Args::parse())).await
}

/// The owner's requests.
#[derive(Clone)]
struct Owner {
    api: Api,
    creds: Creds,
}

impl Owner {
    /// Uploads `data` as `name`; its URL.
    async fn upload(&self, name: &str, data: Vec<u8>) -> Result<String, BoxError> {
        let part = Part::bytes(data).file_name(name.to_owned());
        let response =
            self.api.post("user_uploads", &self.creds).multipart(Form::new().part("file", part)).send().await?;
        let (status, body) = (response.status(), response.bytes().await?);
        let reply = success_json(&format!("POST /api/v1/user_uploads ({name})"), status, &body)?;
        Ok(reply["url"].as_str().ok_or("no url")?.to_owned())
    }

    /// Downloads `url` (outside /api/v1) with Basic auth; its status and length.
    async fn download(&self, url: &str) -> Result<(u16, usize), BoxError> {
        let response = self
            .api
            .client
            .get(format!("{}{url}", self.api.base))
            .basic_auth(&self.creds.email, Some(&self.creds.api_key))
            .send()
            .await?;
        let status = response.status().as_u16();
        Ok((status, response.bytes().await?.len()))
    }
}

fn random_bytes(len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    rand::thread_rng().fill_bytes(&mut data);
    data
}

/// MB/s (10^6 bytes) of `bytes` in `took`.
fn mb_per_s(bytes: usize, took: Duration) -> f64 {
    round3(bytes as f64 / 1e6 / took.as_secs_f64())
}

/// A 4000x3000 JPEG that compresses like a photo (smooth gradients with noise).
fn photo() -> Result<Vec<u8>, BoxError> {
    let mut noise = rand::thread_rng();
    let image = image::RgbImage::from_fn(4000, 3000, |x, y| {
        let n = (noise.next_u32() % 24) as u8;
        image::Rgb([(x / 16) as u8 ^ n, (y / 12) as u8 ^ n, ((x + y) / 28) as u8 ^ n])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85).encode_image(&image)?;
    Ok(out.into_inner())
}

async fn run(args: Args) -> Result<(), BoxError> {
    let options = ServerOptions {
        bin: args.server_bin.clone(),
        log: args.server_log.clone(),
        http_workers: None,
        actor_threads: None,
        dir_prefix: "agora-uploadload-",
        config: LOAD_CONFIG.to_owned(),
        capture_log: false,
        seed: None,
    };
    // Held to the end: dropping it kills the server and removes its directory.
    let (server, api) = ManagedServer::start(&options, http_client()?).await?;
    let pid = server.pid();
    eprintln!("server pid {pid} on {}, data in {}", api.base, server.dir.path().display());
    let rc = Zuliprc::read(&server.dir.path().join("zuliprc"))?;
    let owner = Owner { api, creds: Creds { email: rc.email, api_key: rc.key } };

    // --- One large file. ---
    let large = random_bytes(args.large_mib << 20);
    let baseline = rss_kib(pid)?;
    let (mut up, mut down, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..args.rounds {
        let peak = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (peak, done) = (peak.clone(), done.clone());
            tokio::spawn(async move {
                while !done.load(Ordering::Relaxed) {
                    if let Ok(kib) = rss_kib(pid) {
                        peak.fetch_max(kib, Ordering::Relaxed);
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        };
        let started = Instant::now();
        let url = owner.upload(&format!("large-{round}.bin"), large.clone()).await?;
        up.push(started.elapsed());
        done.store(true, Ordering::Relaxed);
        sampler.await?;
        peaks.push(peak.load(Ordering::Relaxed));
        let started = Instant::now();
        let (status, len) = owner.download(&url).await?;
        down.push(started.elapsed());
        if status != 200 || len != large.len() {
            return Err(format!("download of {url}: HTTP {status}, {len} bytes").into());
        }
        eprintln!(
            "large file round {round}: up {:.0} ms, down {:.0} ms",
            up[round].as_secs_f64() * 1e3,
            down[round].as_secs_f64() * 1e3
        );
    }
    let (up, down) = (Stats::new(up), Stats::new(down));
    let peak_rss = peaks.iter().copied().max().unwrap_or(0);
    let bytes = large.len();
    println!(
        "{} MiB file, {} rounds: upload p50 {} ({:.0} MB/s), download p50 {} ({:.0} MB/s)",
        args.large_mib,
        args.rounds,
        ms(up.percentile(50)),
        up.percentile(50).map_or(0.0, |d| mb_per_s(bytes, d)),
        ms(down.percentile(50)),
        down.percentile(50).map_or(0.0, |d| mb_per_s(bytes, d)),
    );
    println!(
        "server memory: {:.1} MiB before, peak {:.1} MiB during the uploads (+{:.1} MiB)",
        baseline as f64 / 1024.0,
        peak_rss as f64 / 1024.0,
        peak_rss.saturating_sub(baseline) as f64 / 1024.0
    );

    // --- Many small files. ---
    let small: Vec<Vec<u8>> = (0..args.small_files).map(|_| random_bytes(args.small_kib << 10)).collect();
    let permits = Arc::new(tokio::sync::Semaphore::new(args.concurrency));
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for (i, data) in small.into_iter().enumerate() {
        let (owner, permits) = (owner.clone(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            let t = Instant::now();
            let url = owner.upload(&format!("small-{i}.bin"), data).await?;
            Ok::<_, BoxError>((url, t.elapsed()))
        });
    }
    let (mut urls, mut latencies) = (Vec::new(), Vec::new());
    while let Some(done) = tasks.join_next().await {
        let (url, took) = done??;
        urls.push(url);
        latencies.push(took);
    }
    let small_up_took = started.elapsed();
    let small_up = Stats::new(latencies);
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for url in urls {
        let (owner, permits) = (owner.clone(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            let t = Instant::now();
            let (status, _) = owner.download(&url).await?;
            if status != 200 {
                return Err(format!("download of {url}: HTTP {status}").into());
            }
            Ok::<_, BoxError>(t.elapsed())
        });
    }
    let mut latencies = Vec::new();
    while let Some(done) = tasks.join_next().await {
        latencies.push(done??);
    }
    let small_down_took = started.elapsed();
    let small_down = Stats::new(latencies);
    let n = args.small_files as f64;
    println!(
        "{} files of {} KiB, {} at a time: upload {:.0} files/s ({}), download {:.0} files/s ({})",
        args.small_files,
        args.small_kib,
        args.concurrency,
        n / small_up_took.as_secs_f64(),
        small_up.describe(),
        n / small_down_took.as_secs_f64(),
        small_down.describe(),
    );

    // --- Thumbnails of a 4000x3000 photo. ---
    let jpeg = photo()?;
    let format = &agora_actors::uploads::images::THUMBNAIL_FORMATS[0];
    let mut local = Vec::new();
    for _ in 0..args.thumbnails {
        let started = Instant::now();
        agora_actors::uploads::images::thumbnail(&jpeg, format).map_err(|e| e.0)?;
        local.push(started.elapsed());
    }
    let mut served = Vec::new();
    for round in 0..args.thumbnails {
        let url = owner.upload(&format!("photo-{round}.jpg"), jpeg.clone()).await?;
        let started = Instant::now();
        let thumbnail =
            format!("/user_uploads/thumbnail/{}/{}", url.trim_start_matches("/user_uploads/"), format.name());
        loop {
            if owner.download(&thumbnail).await?.0 == 200 {
                break;
            }
            if started.elapsed() > Duration::from_secs(60) {
                return Err(format!("{thumbnail} not made within 60 s").into());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        served.push(started.elapsed());
    }
    let (local, served) = (Stats::new(local), Stats::new(served));
    println!(
        "thumbnail of a 4000x3000 JPEG ({:.1} MB) to {}: {} in process; upload answered to thumbnail served {}",
        jpeg.len() as f64 / 1e6,
        format.name(),
        local.describe(),
        served.describe()
    );

    let summary = json!({
        "large_mib": args.large_mib,
        "large_upload_ms_p50": ms_json(up.percentile(50)),
        "large_upload_mb_s": up.percentile(50).map(|d| mb_per_s(bytes, d)),
        "large_download_ms_p50": ms_json(down.percentile(50)),
        "large_download_mb_s": down.percentile(50).map(|d| mb_per_s(bytes, d)),
        "rss_before_kib": baseline,
        "rss_peak_during_uploads_kib": peak_rss,
        "small_files": args.small_files,
        "small_upload_files_s": round3(n / small_up_took.as_secs_f64()),
        "small_upload_ms_p50": ms_json(small_up.percentile(50)),
        "small_upload_ms_p99": ms_json(small_up.percentile(99)),
        "small_download_files_s": round3(n / small_down_took.as_secs_f64()),
        "small_download_ms_p50": ms_json(small_down.percentile(50)),
        "small_download_ms_p99": ms_json(small_down.percentile(99)),
        "thumbnail_in_process_ms_p50": ms_json(local.percentile(50)),
        "thumbnail_served_ms_p50": ms_json(served.percentile(50)),
    });
    println!("{summary}");
    drop(server);
    Ok(())
}
