//! Alert words found as Zulip finds them: the cases of Zulip's own Markdown tests, its
//! word boundaries and their quirks, and the fenced blocks whose text does not count.

use super::*;

const HAMLET: UserId = UserId(1);
const CORDELIA: UserId = UserId(2);
const IAGO: UserId = UserId(3);
const PROSPERO: UserId = UserId(4);
const OTHELLO: UserId = UserId(5);
const AARON: UserId = UserId(6);

fn matcher(words: &[(UserId, &[&str])]) -> AlertWordMatcher {
    let pairs = words.iter().flat_map(|(user, words)| words.iter().map(move |w| (*user, *w)));
    AlertWordMatcher::new(pairs).unwrap()
}

fn alerted(words: &[(UserId, &[&str])], content: &str) -> Vec<UserId> {
    matcher(words).users_alerted_by(content).into_iter().collect()
}

#[test]
fn no_words_make_no_matcher() {
    assert!(AlertWordMatcher::new(Vec::new()).is_none());
    assert!(AlertWordMatcher::new(vec![(HAMLET, "")]).is_none());
}

#[test]
fn zulips_markdown_tests_alert_the_same_users() {
    // test_alert_words
    let words: &[(UserId, &[&str])] = &[(OTHELLO, &["ALERTWORD", "scaryword"])];
    assert_eq!(alerted(words, "We have an ALERTWORD day today!"), vec![OTHELLO]);
    assert_eq!(alerted(words, "We have a NOTHINGWORD day today!"), vec![]);

    // test_alert_words_returns_user_ids_with_alert_words
    let words: &[(UserId, &[&str])] = &[
        (HAMLET, &["how"]),
        (CORDELIA, &["this possible"]),
        (IAGO, &["hello"]),
        (PROSPERO, &["hello"]),
        (OTHELLO, &["how are you"]),
        (AARON, &["hey"]),
    ];
    let content = "hello how is this possible how are you doing today";
    assert_eq!(alerted(words, content), vec![HAMLET, CORDELIA, IAGO, PROSPERO, OTHELLO]);

    // test_alert_words_returns_user_ids_with_alert_words_1
    let words: &[(UserId, &[&str])] = &[
        (HAMLET, &["provisioning", "Prod deployment"]),
        (CORDELIA, &["test", "Prod"]),
        (IAGO, &["prod"]),
        (PROSPERO, &["deployment"]),
        (OTHELLO, &["last"]),
    ];
    let content = "Hello, everyone. Prod deployment has been completed
        And this is a new line
        to test out how Markdown convert this into something line ending split array
        and this is a new line
        last";
    assert_eq!(alerted(words, content), vec![HAMLET, CORDELIA, IAGO, PROSPERO, OTHELLO]);

    // test_alert_words_returns_user_ids_with_alert_words_in_french
    let words: &[(UserId, &[&str])] = &[
        (HAMLET, &["réglementaire", "une politique", "une merveille"]),
        (CORDELIA, &["énormément", "Prod"]),
        (IAGO, &["prod"]),
        (PROSPERO, &["deployment"]),
        (OTHELLO, &["last"]),
    ];
    let content = "This is to test out alert words work in languages with accented characters too
        bonjour est (énormément) ce a quoi ressemble le français
        et j'espère qu'il n'y n' réglementaire a pas de mots d'alerte dans ce texte français
        ";
    assert_eq!(alerted(words, content), vec![HAMLET, CORDELIA]);

    // test_alert_words_returns_user_ids_with_alert_words_with_huge_alert_words
    let many: Vec<&str> = vec!["xxxxxxxxxx"; 500];
    let words: &[(UserId, &[&str])] = &[(HAMLET, &["issue124"]), (CORDELIA, &many), (IAGO, &many), (OTHELLO, &many)];
    let content = "The code above will print 10 random values of numbers between 1 and 100.
        The second line, for x in range(10), determines how many values will be printed (when you use
        range(x), the number that you use in place of x will be the amount of values that you'll have
        printed. if you want 20 values, use range(20). use range(5) if you only want 5 values returned,
        etc.). I was talking about the issue124 on github. Then the third line: print random.randint(1,101) will automatically select a random integer
        between 1 and 100 for you. The process is fairly simple
        ";
    assert_eq!(alerted(words, content), vec![HAMLET]);
}

#[test]
fn words_match_case_insensitively_between_zulips_punctuation() {
    let words: &[(UserId, &[&str])] = &[(HAMLET, &["Foo"])];
    for content in ["foo", "FOO!", "a (foo) b", "\"foo.", "*foo*", "`foo`", "> foo", "[foo]", "x, foo; y", "a\nfoo\n"] {
        assert_eq!(alerted(words, content), vec![HAMLET], "{content:?}");
    }
    for content in ["food", "the foobar", "ab-foo", "a foo-b", "a foo\"", "a foo/b", "a #foo", "a @foo"] {
        assert_eq!(alerted(words, content), vec![], "{content:?}");
    }
}

#[test]
fn zulips_quirks_are_kept() {
    let words: &[(UserId, &[&str])] = &[(HAMLET, &["foo"])];
    // One character before a word never stops it (Zulip accepts "index <= 0")...
    assert_eq!(alerted(words, "xfoo is here"), vec![HAMLET]);
    // ...two do.
    assert_eq!(alerted(words, "xxfoo is here"), vec![]);
    // `"` does not end a word.
    assert_eq!(alerted(words, "say \"foo\""), vec![]);
}

#[test]
fn tabs_count_as_spaces_and_overlapping_words_all_count() {
    assert_eq!(alerted(&[(HAMLET, &["foo"])], "a\tfoo\tb"), vec![HAMLET]);
    // A phrase across a tab: the tab becomes the spaces up to the next column of four.
    assert_eq!(alerted(&[(HAMLET, &["abc def"])], "abc\tdef"), vec![HAMLET]);
    assert_eq!(alerted(&[(HAMLET, &["ab  def"])], "ab\tdef"), vec![HAMLET]);
    let words: &[(UserId, &[&str])] = &[(HAMLET, &["new york"]), (CORDELIA, &["york city"]), (IAGO, &["york"])];
    assert_eq!(alerted(words, "in new york city"), vec![HAMLET, CORDELIA, IAGO]);
}

#[test]
fn code_and_math_blocks_are_skipped_but_quotes_and_spoilers_count() {
    let words: &[(UserId, &[&str])] = &[(HAMLET, &["secret"])];
    assert_eq!(alerted(words, "```\nthe secret\n```"), vec![]);
    assert_eq!(alerted(words, "~~~~ python\nsecret = 1\n~~~~\nafter"), vec![]);
    assert_eq!(alerted(words, "```math\nsecret\n```"), vec![]);
    // An unclosed block runs to the end.
    assert_eq!(alerted(words, "```\nsecret"), vec![]);
    // A shorter fence does not close a longer one.
    assert_eq!(alerted(words, "````\n```\nsecret\n```\n````"), vec![]);
    assert_eq!(alerted(words, "```quote\nthe secret\n```"), vec![HAMLET]);
    assert_eq!(alerted(words, "```Quoted\nthe secret\n```"), vec![HAMLET]);
    assert_eq!(alerted(words, "```spoiler the secret\nhidden\n```"), vec![HAMLET]);
    assert_eq!(alerted(words, "```spoiler header\nthe secret\n```"), vec![HAMLET]);
    // Code inside a quote is still code; the quote's own fence closes it first.
    assert_eq!(alerted(words, "````quote\n```\nsecret\n```\n````"), vec![]);
    assert_eq!(alerted(words, "```quote\n```\nsecret\n```\n```"), vec![HAMLET]);
    // Not fences: indented, or with a backtick after the language; inline code counts.
    assert_eq!(alerted(words, " ```\nsecret\n```"), vec![HAMLET]);
    assert_eq!(alerted(words, "```py`\nsecret"), vec![HAMLET]);
    assert_eq!(alerted(words, "use `secret` here"), vec![HAMLET]);
}

#[test]
fn fences_parse_as_zulips_fence_re() {
    let kind = |line: &str| fence(line).map(|b| (b.fence, b.kind, b.header));
    assert_eq!(kind("```"), Some(("```".into(), Kind::Code, None)));
    assert_eq!(kind("~~~~  {.Quote}"), Some(("~~~~".into(), Kind::Quote, Some("}".into()))));
    assert_eq!(kind("```{python}"), Some(("```".into(), Kind::Code, Some("}".into()))));
    assert_eq!(kind("``` quote"), Some(("```".into(), Kind::Quote, None)));
    assert_eq!(kind("```spoiler  Big reveal "), Some(("```".into(), Kind::Spoiler, Some("Big reveal ".into()))));
    assert_eq!(kind("``"), None);
    assert_eq!(kind("``` !x"), None);
    assert_eq!(kind("```a~"), None);
    assert_eq!(kind(" ```"), None);
}
