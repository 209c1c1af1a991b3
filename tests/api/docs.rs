//! The documentation stays true: every route the server serves is in `docs/api.md` and
//! nothing else is; every flag and environment variable of `agora --help` is in
//! `docs/configuration.md`'s table and the table names no other.

use std::collections::BTreeSet;
use std::path::PathBuf;

fn doc(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `METHOD /path` of each table row of the section headed `heading` (up to the next).
fn listed_routes(page: &str, heading: &str) -> BTreeSet<String> {
    let start = page.find(heading).unwrap_or_else(|| panic!("no section {heading}"));
    let section = &page[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(route, _)| route.to_owned()))
        .collect()
}

#[test]
fn the_api_page_lists_every_route_and_nothing_else() {
    let (api, other) = agora::http::routes::manifest();
    let page = doc("docs/api.md");
    let served: BTreeSet<String> = api.iter().map(|(m, p)| format!("{m} {p}")).collect();
    assert_eq!(listed_routes(&page, "## Under `/api/v1` (and `/json`)"), served);
    let hashed = |p: &str| {
        if p.starts_with("/static/generated/emoji/emoji_api.") && p != "/static/generated/emoji/emoji_api.json" {
            "/static/generated/emoji/emoji_api.{hash}.json".to_owned()
        } else {
            p.to_owned()
        }
    };
    let served: BTreeSet<String> = other.iter().map(|(m, p)| format!("{m} {}", hashed(p))).collect();
    assert_eq!(listed_routes(&page, "## Pages and files"), served);
}

#[test]
fn the_configuration_page_names_the_settings_of_agora_help() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agora")).arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let mut flags = BTreeSet::new();
    let mut variables = BTreeSet::new();
    for line in help.lines() {
        // An option's line starts with `--name` or `-x, --name`.
        let trimmed = line.trim_start();
        let long = match trimmed.as_bytes() {
            [b'-', b'-', c, ..] if c.is_ascii_lowercase() => Some(&trimmed[2..]),
            [b'-', c, b',', b' ', b'-', b'-', ..] if c.is_ascii_alphabetic() => Some(&trimmed[6..]),
            _ => None,
        };
        if let Some(rest) = long {
            let flag: String = rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '-').collect();
            if !["help", "version"].contains(&flag.as_str()) {
                flags.insert(format!("--{flag}"));
            }
        }
        if let Some(at) = line.find("[env: ") {
            variables.insert(line[at + 6..].chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect());
        }
    }
    let page = doc("docs/configuration.md");
    let mut documented_flags = BTreeSet::new();
    let mut documented_variables = BTreeSet::new();
    for row in page.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').collect();
        let (Some(flag_cell), Some(variable_cell)) = (cells.get(1), cells.get(2)) else { continue };
        for word in flag_cell.split(|c: char| c == '`' || c == ',' || c.is_whitespace()) {
            if word.starts_with("--") && word[2..].starts_with(|c: char| c.is_ascii_lowercase()) {
                documented_flags.insert(word.to_owned());
            }
        }
        for word in variable_cell.split(|c: char| c == '`' || c == ',' || c.is_whitespace()) {
            if word.starts_with("AGORA_") {
                documented_variables.insert(word.to_owned());
            }
        }
    }
    assert_eq!(documented_flags, flags, "flags of `agora --help` against docs/configuration.md");
    // The SMTP password is read from the environment (or the file) only, never a flag.
    variables.insert("AGORA_SMTP_PASSWORD".to_owned());
    assert_eq!(documented_variables, variables, "variables of `agora --help` against docs/configuration.md");
}

#[test]
fn the_documentation_speaks_of_the_software_not_of_its_issues() {
    for (path, text) in pages() {
        let text = text.to_lowercase();
        for (at, _) in text.match_indices("issue") {
            let after = text[at + 5..].trim_start_matches(['s', ' ', '#']);
            assert!(
                !after.starts_with(|c: char| c.is_ascii_digit()),
                "{} names an issue by number: {:?}",
                path.display(),
                &text[at..(at + 20).min(text.len())]
            );
        }
    }
}

/// Every documentation page: README, CONTRIBUTING and docs/*.md, as (path, text).
fn pages() -> Vec<(PathBuf, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            paths.push(path);
        }
    }
    paths.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn links_between_pages_lead_to_a_page_and_a_heading() {
    let mut broken = Vec::new();
    for (path, text) in pages() {
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let linked = if file.is_empty() { path.clone() } else { path.parent().unwrap().join(file) };
            let Ok(linked_text) = std::fs::read_to_string(&linked) else {
                if !linked.exists() {
                    broken.push(format!("{}: {target} (no such file)", path.display()));
                }
                continue;
            };
            if !fragment.is_empty() {
                let headings: BTreeSet<String> = linked_text
                    .lines()
                    .filter(|l| l.starts_with('#'))
                    .map(|l| anchor(l.trim_start_matches('#')))
                    .collect();
                if !headings.contains(fragment) {
                    broken.push(format!("{}: {target} (no such heading)", path.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_settings_files_the_pages_show_are_accepted() {
    let mut checked = 0;
    for (path, text) in pages() {
        for block in text.split("```toml\n").skip(1) {
            let toml = block.split("```").next().unwrap();
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("agora.toml");
            std::fs::write(&file, toml).unwrap();
            let data = dir.path().join("data");
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_agora"))
                .args(["--config", file.to_str().unwrap(), "--data-dir", data.to_str().unwrap(), "list-realms"])
                .env("AGORA_SMTP_PASSWORD", "secret")
                .env_remove("RUST_LOG")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}: the settings file\n{toml}\nis refused: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 2, "the configuration and operations pages show settings files");
}
