//! What moving an organization in and out costs. Writes a Zulip export (Zulip's format, as
//! `manage.py export` writes it) of `--users` people, `--channels` channels of 5 to 40
//! members each and `--messages` messages (a tenth of them direct messages), then runs the
//! server binary (`target/<profile>/agora`, next to this example's directory) on a fresh
//! data directory:
//!
//! 1. `agora import zulip DIR --subdomain bench`, measuring the wall time, the CPU time and
//!    the peak memory (maximum resident set) of the process;
//! 2. `agora export --subdomain bench --to FILE.tar.gz`, measured the same way.
//!
//! ```text
//! cargo build --release --bins --examples && target/release/examples/transfer
//! ```
//!
//! Progress goes to stderr; a summary and one JSON line go to stdout.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

#[derive(Parser, Debug)]
struct Args {
    #[arg(long, default_value_t = 1_000)]
    users: usize,
    #[arg(long, default_value_t = 200)]
    channels: usize,
    #[arg(long, default_value_t = 1_000_000)]
    messages: usize,
    /// Where to write the export and the data directory [default: a temporary directory]
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The server binary [default: target/<profile>/agora]
    #[arg(long)]
    server_bin: Option<PathBuf>,
}

type BoxError = Box<dyn std::error::Error>;

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("transfer: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One measured run of the server binary.
struct Measured {
    wall_s: f64,
    cpu_s: f64,
    max_rss_mib: f64,
    stdout: String,
}

#[allow(unsafe_code)]
fn measure(bin: &Path, args: &[&str]) -> Result<Measured, BoxError> {
    let started = Instant::now();
    let child =
        Command::new(bin).args(args).stdout(Stdio::piped()).stderr(Stdio::inherit()).env_remove("RUST_LOG").spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout {
        std::io::Read::read_to_string(&mut out, &mut stdout)?;
    }
    let mut status = 0;
    // SAFETY: `rusage` is plain data that wait4 fills in; `pid` is our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, filling in `status` and `usage`.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{} {args:?} failed (status {status})", bin.display()).into());
    }
    let cpu = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Measured {
        wall_s: started.elapsed().as_secs_f64(),
        cpu_s: cpu(usage.ru_utime) + cpu(usage.ru_stime),
        max_rss_mib: usage.ru_maxrss as f64 / 1024.0,
        stdout,
    })
}

fn run(args: Args) -> Result<(), BoxError> {
    let bin = match &args.server_bin {
        Some(bin) => bin.clone(),
        None => std::env::current_exe()?
            .parent()
            .and_then(Path::parent)
            .map(|dir| dir.join("agora"))
            .ok_or("cannot locate the server binary; pass --server-bin")?,
    };
    let temp = tempfile::tempdir()?;
    let root = args.dir.clone().unwrap_or_else(|| temp.path().to_path_buf());
    let export = root.join("zulip-export-bench");
    let data = root.join("data");
    std::fs::create_dir_all(&data)?;
    let started = Instant::now();
    let written = write_export(&args, &export)?;
    eprintln!(
        "wrote the export ({} user messages, {:.0} MiB) in {:.1} s",
        written.0,
        written.1 as f64 / 1048576.0,
        started.elapsed().as_secs_f64()
    );

    let config = data.join("agora.toml");
    std::fs::write(&config, "")?;
    let base = ["--data-dir", data.to_str().ok_or("path")?, "--log", "warn"];
    let mut import_args: Vec<&str> = base.to_vec();
    let export_dir = export.to_str().ok_or("path")?;
    import_args.extend(["import", "zulip", export_dir, "--subdomain", "bench"]);
    let imported = measure(&bin, &import_args)?;
    eprintln!("import: {}", imported.stdout.trim());
    let archive = root.join("bench-export.tar.gz");
    let mut export_args: Vec<&str> = base.to_vec();
    let archive_str = archive.to_str().ok_or("path")?;
    export_args.extend(["export", "--subdomain", "bench", "--to", archive_str]);
    let exported = measure(&bin, &export_args)?;
    eprintln!("export: {}", exported.stdout.trim());
    let archive_mib = std::fs::metadata(&archive)?.len() as f64 / 1048576.0;
    let db_mib = std::fs::metadata(data.join("agora.sqlite3"))?.len() as f64 / 1048576.0;

    println!(
        "Imported {} users, {} channels, {} messages ({} user messages):",
        args.users, args.channels, args.messages, written.0
    );
    println!(
        "  import: {:.1} s wall, {:.1} s CPU, peak RSS {:.0} MiB, database {db_mib:.0} MiB",
        imported.wall_s, imported.cpu_s, imported.max_rss_mib
    );
    println!(
        "  export: {:.1} s wall, {:.1} s CPU, peak RSS {:.0} MiB, archive {archive_mib:.0} MiB",
        exported.wall_s, exported.cpu_s, exported.max_rss_mib
    );
    println!(
        "{}",
        json!({
            "users": args.users, "channels": args.channels, "messages": args.messages, "user_messages": written.0,
            "import": {"wall_s": imported.wall_s, "cpu_s": imported.cpu_s, "max_rss_mib": imported.max_rss_mib, "db_mib": db_mib},
            "export": {"wall_s": exported.wall_s, "cpu_s": exported.cpu_s, "max_rss_mib": exported.max_rss_mib, "archive_mib": archive_mib},
        })
    );
    Ok(())
}

/// Writes the export; returns (user messages, bytes of message files).
fn write_export(args: &Args, dir: &Path) -> Result<(u64, u64), BoxError> {
    std::fs::create_dir_all(dir)?;
    let mut rng = StdRng::seed_from_u64(7);
    let t0 = 1_600_000_000.0f64;
    let users: Vec<serde_json::Value> = (1..=args.users)
        .map(|id| {
            json!({"id": id, "realm": 2, "email": format!("user{id}@bench.test"), "delivery_email": format!("user{id}@bench.test"),
                "full_name": format!("User {id}"), "role": if id == 1 { 100 } else { 400 }, "is_active": true, "is_bot": false,
                "bot_type": null, "bot_owner": null, "avatar_source": "G", "timezone": "", "date_joined": t0,
                "groups": [], "user_permissions": []})
        })
        .collect();
    // Recipients: users 1..=U, channels 100_000 + c, group conversations 200_000 + g.
    let mut recipients = Vec::new();
    let mut subscriptions = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for u in 1..=args.users {
        recipients.push(json!({"id": u, "type": 1, "type_id": u}));
    }
    let mut streams = Vec::new();
    for c in 1..=args.channels {
        let size = rng.gen_range(5..=40).min(args.users);
        let mut chosen: Vec<usize> = Vec::new();
        while chosen.len() < size {
            let u = rng.gen_range(1..=args.users);
            if !chosen.contains(&u) {
                chosen.push(u);
            }
        }
        streams.push(json!({"id": c, "realm": 2, "name": format!("channel {c}"), "description": "", "invite_only": c % 10 == 0,
            "history_public_to_subscribers": true, "deactivated": false, "date_created": t0, "creator": null, "folder": null}));
        recipients.push(json!({"id": 100_000 + c, "type": 2, "type_id": c}));
        for u in &chosen {
            subscriptions.push(
                json!({"id": subscriptions.len() + 1, "user_profile": u, "recipient": 100_000 + c, "active": true}),
            );
        }
        members.push(chosen);
    }
    let realm = json!({
        "zerver_realm": [{"id": 2, "name": "Bench", "description": "", "date_created": t0, "deactivated": false}],
        "zerver_userprofile": users, "zerver_stream": streams, "zerver_recipient": recipients,
        "zerver_subscription": subscriptions, "zerver_client": [{"id": 1, "name": "website"}],
    });
    serde_json::to_writer(BufWriter::new(File::create(dir.join("realm.json"))?), &realm)?;
    std::fs::write(dir.join("migration_status.json"), r#"{"migrations_by_app": {}, "zulip_version": "11.0"}"#)?;
    let (mut user_messages, mut bytes) = (0u64, 0u64);
    let words =
        ["deploy", "review", "lunch", "release", "bug", "fix", "meeting", "plan", "coffee", "design", "tests", "ship"];
    for file in 0..args.messages.div_ceil(1_000) {
        let path = dir.join(format!("messages-{:06}.json", file + 1));
        let mut out = BufWriter::new(File::create(&path)?);
        let (mut msgs, mut ums) = (String::new(), String::new());
        for i in 0..1_000.min(args.messages - file * 1_000) {
            let id = file * 1_000 + i + 1;
            let at = t0 + id as f64 * 2.0;
            let content = format!(
                "{} {} {} {}",
                words[rng.gen_range(0..12)],
                words[rng.gen_range(0..12)],
                words[rng.gen_range(0..12)],
                id
            );
            let (recipient, sender, topic, receivers): (usize, usize, String, Vec<usize>) = if id % 10 == 0 {
                let a = rng.gen_range(1..=args.users);
                let b = rng.gen_range(1..=args.users);
                (b, a, String::new(), if a == b { vec![a] } else { vec![a, b] })
            } else {
                let c = rng.gen_range(0..args.channels);
                let m = &members[c];
                (100_001 + c, m[rng.gen_range(0..m.len())], format!("topic {}", rng.gen_range(0..20)), m.clone())
            };
            if !msgs.is_empty() {
                msgs.push(',');
            }
            msgs.push_str(&format!(
                r#"{{"id":{id},"sender":{sender},"recipient":{recipient},"realm":2,"subject":"{topic}","content":"{content}","rendered_content":"<p>{content}</p>","date_sent":{at},"sending_client":1,"last_edit_time":null,"edit_history":null,"has_attachment":false,"has_image":false,"has_link":false}}"#
            ));
            for u in receivers {
                let flags =
                    if u == sender || rng.gen_bool(0.9) { 1 } else { 0 } | if recipient < 100_000 { 2048 } else { 0 };
                if !ums.is_empty() {
                    ums.push(',');
                }
                ums.push_str(&format!(r#"{{"id":0,"user_profile":{u},"message":{id},"flags_mask":{flags}}}"#));
                user_messages += 1;
            }
        }
        write!(out, r#"{{"zerver_message":[{msgs}],"zerver_usermessage":[{ums}]}}"#)?;
        out.flush()?;
        bytes += std::fs::metadata(&path)?.len();
    }
    Ok((user_messages, bytes))
}
