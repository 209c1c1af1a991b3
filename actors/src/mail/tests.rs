//! The outbox worker over a real database and outbox directory: a mail goes out once, a
//! failure is retried after a growing delay and given up after the last attempt, and mail
//! queued before a restart still goes out.

use std::time::Duration;

use super::*;
use crate::store::outbox::{self, NewMail};
use crate::store::Store;

fn mail(to: &str) -> NewMail {
    NewMail {
        realm_id: None,
        kind: "invitation".into(),
        to: to.into(),
        from_name: "Acme".into(),
        subject: "Owner has invited you to join Acme".into(),
        body: "Hi there,\n\nOrganization Owner (owner@localhost) wants you to join them on Zulip -- the team communication tool designed for productivity.\n".into(),
        message_id: format!("{to}.test@agora.test"),
    }
}

fn queue(store: &Store, to: &str, now: i64) -> i64 {
    store.write(|tx| outbox::enqueue(tx, &mail(to), now)).unwrap()
}

fn eml_files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.retain(|n| n.ends_with(".eml"));
    names.sort();
    names
}

#[test]
fn retries_wait_twice_as_long_each_time_up_to_the_maximum_then_stop() {
    let s = MailSettings {
        retry_base: Duration::from_secs(60),
        retry_max: Duration::from_secs(300),
        max_attempts: 5,
        ..MailSettings::files("/tmp/x".into(), "noreply@agora.test")
    };
    let delays: Vec<Option<i64>> = (1..=5).map(|attempt| s.retry_at(1000, attempt).map(|t| t - 1000)).collect();
    assert_eq!(delays, vec![Some(60), Some(120), Some(240), Some(300), None]);
}

#[actix_rt::test]
async fn a_mail_is_written_once_and_marked_sent() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let settings = MailSettings::files(dir.path().join("outbox"), "noreply@agora.test");
    let transport = Transport::new(&settings).unwrap();
    let id = queue(&store, "alice@example.com", 1000);
    let done = drain_once(&store, &transport, &settings, 1000).await.unwrap();
    assert_eq!(done, Drained { sent: 1, retried: 0, given_up: 0 });
    assert_eq!(eml_files(&settings.outbox_dir), vec![format!("{id:08}.eml")]);
    let text = std::fs::read_to_string(settings.outbox_dir.join(format!("{id:08}.eml"))).unwrap();
    for header in [
        "From: Acme <noreply@agora.test>",
        "To: alice@example.com",
        "Subject: Owner has invited you to join Acme",
        "Message-ID: <alice@example.com.test@agora.test>",
    ] {
        assert!(text.contains(header), "{header} in {text}");
    }
    // Readable as it is (no quoted-printable), lines wrapped.
    assert!(
        text.contains("Content-Transfer-Encoding: 7bit") || text.contains("Content-Transfer-Encoding: 8bit"),
        "{text}"
    );
    // Nothing is due any more: a second pass sends nothing again.
    assert_eq!(drain_once(&store, &transport, &settings, 5000).await.unwrap(), Drained::default());
    assert_eq!(outbox::counts(&store.conn().unwrap()).unwrap(), (0, 1, 0));
    assert_eq!(outbox::next_due(&store.conn().unwrap()).unwrap(), None);
}

#[actix_rt::test]
async fn a_failure_is_retried_later_and_given_up_after_the_last_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // The outbox directory cannot be created: a file is in the way.
    let blocked = dir.path().join("outbox");
    std::fs::write(&blocked, "not a directory").unwrap();
    let settings = MailSettings { max_attempts: 3, ..MailSettings::files(blocked.clone(), "noreply@agora.test") };
    let transport = Transport::new(&settings).unwrap();
    let first = queue(&store, "alice@example.com", 1000);
    let done = drain_once(&store, &transport, &settings, 1000).await.unwrap();
    assert_eq!(done, Drained { sent: 0, retried: 1, given_up: 0 });
    // Not due before its delay; due after it.
    assert_eq!(outbox::next_due(&store.conn().unwrap()).unwrap(), Some(1060));
    assert_eq!(drain_once(&store, &transport, &settings, 1059).await.unwrap(), Drained::default());
    // The way is cleared: the retry goes out, once.
    std::fs::remove_file(&blocked).unwrap();
    assert_eq!(drain_once(&store, &transport, &settings, 1060).await.unwrap().sent, 1);
    assert_eq!(eml_files(&blocked), vec![format!("{first:08}.eml")]);

    // A mail that never gets through is given up after max_attempts, and kept.
    let other = dir.path().join("other");
    std::fs::write(&other, "").unwrap();
    let settings = MailSettings { max_attempts: 2, ..MailSettings::files(other, "noreply@agora.test") };
    let transport = Transport::new(&settings).unwrap();
    queue(&store, "bob@example.com", 2000);
    assert_eq!(drain_once(&store, &transport, &settings, 2000).await.unwrap().retried, 1);
    assert_eq!(drain_once(&store, &transport, &settings, 3000).await.unwrap().given_up, 1);
    assert_eq!(outbox::counts(&store.conn().unwrap()).unwrap(), (0, 1, 1));
}

#[actix_rt::test]
async fn a_malformed_address_is_given_up_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let settings = MailSettings::files(dir.path().join("outbox"), "noreply@agora.test");
    let transport = Transport::new(&settings).unwrap();
    queue(&store, "not an address", 1000);
    assert_eq!(drain_once(&store, &transport, &settings, 1000).await.unwrap().given_up, 1);
    assert!(eml_files(&settings.outbox_dir).is_empty());
}

#[actix_rt::test]
async fn the_worker_sends_what_was_queued_before_it_started_and_when_woken() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let settings = MailSettings::files(dir.path().join("outbox"), "noreply@agora.test");
    queue(&store, "early@example.com", crate::clock::now());
    let waker = MailWaker::default();
    spawn_worker(store.clone(), settings.clone(), waker.clone()).unwrap();
    let wait_for = |n: usize| {
        let dir = settings.outbox_dir.clone();
        async move {
            for _ in 0..500 {
                if eml_files(&dir).len() >= n {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            false
        }
    };
    assert!(wait_for(1).await, "mail queued before the start goes out");
    queue(&store, "late@example.com", crate::clock::now());
    waker.wake();
    assert!(wait_for(2).await, "mail queued later goes out when the worker is woken");
}

/// A minimal SMTP server on 127.0.0.1 for one connection: answers `rcpt` to `RCPT TO`
/// (e.g. `"250 OK"`, `"451 try later"`, `"550 no such user"`) and keeps what `DATA` sent.
async fn fake_smtp(rcpt: &'static str) -> (u16, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        write.write_all(b"220 fake ESMTP\r\n").await.unwrap();
        let mut data = String::new();
        let mut in_data = false;
        while let Ok(Some(line)) = lines.next_line().await {
            if in_data {
                if line == "." {
                    in_data = false;
                    write.write_all(b"250 queued\r\n").await.unwrap();
                } else {
                    data.push_str(&line);
                    data.push('\n');
                }
                continue;
            }
            let verb = line.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
            let reply = match verb.as_str() {
                "EHLO" | "HELO" => "250-fake\r\n250 8BITMIME\r\n".to_owned(),
                "RCPT" => format!("{rcpt}\r\n"),
                "DATA" => {
                    in_data = true;
                    "354 go ahead\r\n".to_owned()
                }
                "QUIT" => {
                    let _ = write.write_all(b"221 bye\r\n").await;
                    break;
                }
                "RSET" | "NOOP" | "MAIL" => "250 OK\r\n".to_owned(),
                _ => "502 unknown\r\n".to_owned(),
            };
            if write.write_all(reply.as_bytes()).await.is_err() {
                break;
            }
        }
        data
    });
    (port, handle)
}

fn smtp_settings(port: u16) -> MailSettings {
    MailSettings {
        smtp: Some(SmtpSettings {
            host: "127.0.0.1".into(),
            port,
            tls: SmtpTls::None,
            username: None,
            password: None,
            timeout: Duration::from_secs(5),
        }),
        ..MailSettings::files("/nonexistent".into(), "noreply@agora.test")
    }
}

#[actix_rt::test]
async fn smtp_delivers_and_its_refusals_are_retried_or_given_up() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (port, server) = fake_smtp("250 OK").await;
    let settings = smtp_settings(port);
    let transport = Transport::new(&settings).unwrap();
    queue(&store, "alice@example.com", 1000);
    assert_eq!(drain_once(&store, &transport, &settings, 1000).await.unwrap().sent, 1);
    drop(transport);
    let data = server.await.unwrap();
    assert!(data.contains("Subject: Owner has invited you to join Acme"), "{data}");
    assert!(data.contains("wants you to join them on Zulip"), "{data}");

    // A temporary refusal (4xx) is tried again later; a permanent one (5xx) is given up.
    let (port, _server) = fake_smtp("451 try later").await;
    let settings = smtp_settings(port);
    let transport = Transport::new(&settings).unwrap();
    queue(&store, "bob@example.com", 2000);
    assert_eq!(drain_once(&store, &transport, &settings, 2000).await.unwrap().retried, 1);
    drop(transport);
    let (port, _server) = fake_smtp("550 no such user").await;
    let settings = smtp_settings(port);
    let transport = Transport::new(&settings).unwrap();
    assert_eq!(drain_once(&store, &transport, &settings, 2060).await.unwrap().given_up, 1);
    assert_eq!(outbox::counts(&store.conn().unwrap()).unwrap(), (0, 1, 1));
}
