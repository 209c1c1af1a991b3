use super::*;

fn set(list: &[(&str, &str)]) -> Linkifiers {
    Linkifiers::new(
        list.iter()
            .enumerate()
            .map(|(i, (p, t))| Linkifier {
                id: i as i64 + 1,
                pattern: (*p).into(),
                url_template: (*t).into(),
                ..Default::default()
            })
            .collect(),
    )
}

#[test]
fn zulip_pattern_errors() {
    assert_eq!(check_pattern("(foo"), Err("Bad regular expression: missing ): (foo".into()));
    assert_eq!(
        check_pattern(r"ZUL-(?P<id>\d????)"),
        Err("Bad regular expression: bad repetition operator: ????".into())
    );
    assert_eq!(
        check_pattern(r"(?<!\w)#(?P<id>\d+)"),
        Err("Bad regular expression: invalid perl operator: (?<!".into())
    );
    assert_eq!(check_pattern(r"(?P<org>[a-z]+)/(?P<id>\d+)"), Ok(vec!["org".into(), "id".into()]));
    assert_eq!(check_pattern(r"\pL{1000}"), Err("Bad regular expression: pattern too large - compile failed".into()));
}

#[test]
fn matches_follow_zulips_delimiters() {
    let l = set(&[("#(?P<id>[0-9]+)", "https://trac.example.com/ticket/{id}")]);
    let c = l.compiled().next().unwrap();
    let found = c.find_at("see #123.", 0).unwrap();
    assert_eq!((found.start, found.text_start, found.text_end, found.next), (3, 4, 8, 8));
    assert_eq!(found.url, "https://trac.example.com/ticket/123");
    assert_eq!(c.find_at("#1", 0).map(|f| f.text_start), Some(0));
    assert!(c.find_at("issue#12", 0).is_none(), "a letter before");
    assert!(c.find_at("#12a", 0).is_none(), "a letter after");
    assert!(c.find_at("x#12", 1).is_none(), "^ only at the start of the text");
    assert_eq!(c.find_at("(#12)", 0).map(|f| f.text_start), Some(1));
}

#[test]
fn groups_that_did_not_match_are_left_out_of_the_url() {
    let l = set(&[("(?P<a>x)|(?P<b>y)", "https://e.com/{a}{?b}")]);
    let c = l.compiled().next().unwrap();
    assert_eq!(c.find_at("y", 0).unwrap().url, "https://e.com/?b=y");
    assert_eq!(c.find_at("x", 0).unwrap().url, "https://e.com/x");
}

#[test]
fn topic_links_in_zulips_order() {
    // Zulip's test_topic_links: linkifiers first by their order, URLs after, overlaps
    // dropped, then sorted by position.
    let l = set(&[
        ("#(?P<id>[0-9]+)", "https://trac.example.com/ticket/{id}"),
        ("(?P<id>[A-Z]{2,}-[0-9]+)", "https://jira.example.com/browse/{id}"),
    ]);
    let links = l.topic_links("ABC-123 #1 and https://google.com/search?q=x).");
    assert_eq!(
        links,
        vec![
            ("ABC-123".into(), "https://jira.example.com/browse/ABC-123".into()),
            ("#1".into(), "https://trac.example.com/ticket/1".into()),
            ("https://google.com/search?q=x".into(), "https://google.com/search?q=x".into()),
        ]
    );
    // Overlapping: the earlier linkifier wins.
    let l = set(&[("ZUL-(?P<id>[0-9]+)", "https://a.com/{id}"), ("(?P<id>[A-Z]+-[0-9]+)", "https://b.com/{id}")]);
    assert_eq!(l.topic_links("ZUL-12"), vec![("ZUL-12".into(), "https://a.com/12".into())]);
    assert!(set(&[]).topic_links("").is_empty());
}

/// Cost of compiling 50 linkifiers and of applying them to a 10,000-character message
/// (run with `--ignored --nocapture`; numbers, not assertions).
#[test]
#[ignore]
fn measure_cost() {
    let list: Vec<(String, String)> =
        (0..50).map(|i| (format!("P{i}-(?P<id>[0-9]+)"), format!("https://e.com/{i}/{{id}}"))).collect();
    let refs: Vec<(&str, &str)> = list.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let start = std::time::Instant::now();
    let set = set(&refs);
    let compiled = start.elapsed();
    let text = "word P7-123 and #9, ".repeat(500);
    let start = std::time::Instant::now();
    let mut found = 0;
    for c in set.compiled() {
        let mut pos = 0;
        while let Some(f) = c.find_at(&text, pos) {
            found += 1;
            pos = f.end;
        }
    }
    println!("compile 50: {compiled:?}; scan {} chars with 50: {:?} ({found} matches)", text.len(), start.elapsed());
}
