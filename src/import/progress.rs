//! An import's progress: a bar with counts and rate on a terminal, log lines otherwise
//! (one per stage, and one every ten seconds of a long one).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use agora_actors::transfer::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress on stderr: a bar when it is a terminal, lines otherwise, each beginning with
/// `command` (`import`, `export`).
pub fn for_stderr(command: &'static str) -> Box<dyn Progress> {
    if std::io::stderr().is_terminal() {
        Box::new(Bar { bar: None })
    } else {
        Box::new(Lines {
            command,
            stage: String::new(),
            done: 0,
            total: None,
            started: Instant::now(),
            last: Instant::now(),
        })
    }
}

struct Bar {
    bar: Option<ProgressBar>,
}

impl Progress for Bar {
    fn stage(&mut self, name: &str, total: Option<u64>) {
        if let Some(bar) = self.bar.take() {
            bar.finish();
        }
        if name == "done" {
            return;
        }
        let bytes = name == "unpacking";
        let template = match (total, bytes) {
            (Some(_), true) => "{prefix:>10} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
            (Some(_), false) => "{prefix:>10} [{bar:40}] {human_pos}/{human_len} ({per_sec}, {eta})",
            (None, _) => "{prefix:>10} {spinner} {human_pos} ({per_sec})",
        };
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        bar.set_draw_target(ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(name.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        self.bar = Some(bar);
    }

    fn advance(&mut self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }
}

struct Lines {
    command: &'static str,
    stage: String,
    done: u64,
    total: Option<u64>,
    started: Instant,
    last: Instant,
}

impl Lines {
    fn line(&self) {
        let secs = self.started.elapsed().as_secs_f64().max(0.001);
        let of = self.total.map(|t| format!(" of {t}")).unwrap_or_default();
        eprintln!("{}: {}: {}{of} ({:.0}/s)", self.command, self.stage, self.done, self.done as f64 / secs);
    }
}

impl Progress for Lines {
    fn stage(&mut self, name: &str, total: Option<u64>) {
        if !self.stage.is_empty() {
            self.line();
        }
        if name == "done" {
            self.stage.clear();
            return;
        }
        *self = Lines {
            command: self.command,
            stage: name.to_owned(),
            done: 0,
            total,
            started: Instant::now(),
            last: Instant::now(),
        };
        eprintln!("{}: {name}...", self.command);
    }

    fn advance(&mut self, n: u64) {
        self.done += n;
        if self.last.elapsed() >= Duration::from_secs(10) {
            self.last = Instant::now();
            self.line();
        }
    }
}
