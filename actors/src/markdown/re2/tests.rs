use super::translate;

/// Patterns RE2 refuses, with the messages `google-re2` gives for them (recorded with its
/// Python binding, as Zulip's `filter_pattern_validator` reports them).
const REFUSED: &[(&str, &str)] = &[
    (r#"(foo"#, r#"missing ): (foo"#),
    (r#"ZUL-(?P<id>\d????)"#, r#"bad repetition operator: ????"#),
    (r#"foo)"#, r#"unexpected ): foo)"#),
    (r#"[abc"#, r#"missing ]: [abc"#),
    (r#"a**"#, r#"bad repetition operator: **"#),
    (r#"*a"#, r#"no argument for repetition operator: *"#),
    (r#"a{1001}"#, r#"invalid repetition size: {1001}"#),
    (r#"\1"#, r#"invalid escape sequence: \1"#),
    (r#"(?=x)"#, r#"invalid perl operator: (?="#),
    (r#"(?!x)"#, r#"invalid perl operator: (?!"#),
    (r#"(?<=x)"#, r#"invalid perl operator: (?<="#),
    (r#"(?<!x)"#, r#"invalid perl operator: (?<!"#),
    (r#"(?P<a-b>x)"#, r#"invalid named capture group: (?P<a-b>"#),
    (r#"(?P=a)"#, r#"invalid perl operator: (?P"#),
    (r#"[z-a]"#, r#"invalid character class range: z-a"#),
    (r#"\k"#, r#"invalid escape sequence: \k"#),
    (r#"x{2,1}"#, r#"invalid repetition size: {2,1}"#),
    (r#"(?z)"#, r#"invalid perl operator: (?z"#),
    (r#"[[:foo:]]"#, r#"invalid character class range: [:foo:]"#),
    (r#"\p{Foo}"#, r#"invalid character class range: \p{Foo}"#),
    (r#"\pX"#, r#"invalid character class range: \pX"#),
    (r#"a\"#, r#"trailing \"#),
    (r#"(?P<a>x"#, r#"missing ): (?P<a>x"#),
    (r#"+"#, r#"no argument for repetition operator: +"#),
    (r#"(?P<>x)"#, r#"invalid named capture group: (?P<>"#),
    (r#"(?:a){2}{3}"#, r#"bad repetition operator: {2}{3}"#),
    (r#"a{2}*"#, r#"bad repetition operator: {2}*"#),
    (r#"a*+"#, r#"bad repetition operator: *+"#),
    (r#"(?i-)"#, r#"invalid perl operator: (?i-)"#),
    (r#"(?-)"#, r#"invalid perl operator: (?-)"#),
    (r#"(?--i)"#, r#"invalid perl operator: (?--"#),
    (r#"(?i"#, r#"invalid perl operator: (?i"#),
    (r#"[^]"#, r#"missing ]: [^]"#),
    (r#"x{1001,}"#, r#"invalid repetition size: {1001,}"#),
    (r#"(a{100}){11}"#, r#"invalid repetition size: {11}"#),
    (r#"\p{Emoji}"#, r#"invalid character class range: \p{Emoji}"#),
    (r#"\Z"#, r#"invalid escape sequence: \Z"#),
    (r#"(?P<n"#, r#"invalid named capture group: (?P<n"#),
    (r#"(?Px)"#, r#"invalid perl operator: (?P"#),
    (r#"a|*"#, r#"no argument for repetition operator: *"#),
    (r#"(*)"#, r#"no argument for repetition operator: *"#),
    (r#"(?i)*"#, r#"no argument for repetition operator: *"#),
    (r#"x**?"#, r#"bad repetition operator: **?"#),
    (r#"[a-\d]"#, r#"invalid escape sequence: \d"#),
    (r#"\x4"#, r#"invalid escape sequence: \x4"#),
    (r#"\xZZ"#, r#"invalid escape sequence: \xZZ"#),
    (r#"\x{41"#, r#"invalid escape sequence: \x{41"#),
    (r#"(?x)a"#, r#"invalid perl operator: (?x"#),
    (r#"\Ea"#, r#"invalid escape sequence: \E"#),
    (r#"[\Q]\E]"#, r#"invalid escape sequence: \Q"#),
    (r#"\8"#, r#"invalid escape sequence: \8"#),
    (r#"[[:alpha:]"#, r#"missing ]: [[:alpha:]"#),
    (r#"[\p{Foo}]"#, r#"invalid character class range: \p{Foo}"#),
    (r#"\p{Foo"#, r#"invalid character class range: \p{Foo"#),
    (r#"\p"#, r#"invalid character class range: \p"#),
    (r#"(?P<a.b>x)"#, r#"invalid named capture group: (?P<a.b>"#),
];

#[test]
fn refused_as_re2_refuses() {
    for (pattern, message) in REFUSED {
        assert_eq!(translate(pattern).err().as_deref(), Some(*message), "{pattern}");
    }
}

/// Patterns RE2 accepts: each compiles for Rust's `regex` and means what RE2 means.
#[test]
fn accepted_and_equivalent() {
    let cases: &[(&str, &str, bool)] = &[
        (r"\d+", "123", true),
        (r"\d+", "١٢٣", false), // RE2's \d is ASCII only
        (r"\w", "é", false),
        (r"\s", "\u{a0}", false),
        (r"a{,3}", "a{,3}", true), // not a repetition: literal
        (r"a{1", "a{1", true),
        (r"[\d-z]", "-", true),
        (r"[a&&b]", "&", true), // no class intersection in RE2
        (r"[a~~b]", "~", true),
        (r"[]a]", "]", true),
        (r"[^]a]", "b", true),
        (r"[a-]", "-", true),
        (r"\Qa.b\E", "a.b", true),
        (r"\Qa.b\E", "axb", false),
        (r"\x41\x{42}\101", "ABA", true),
        (r"\08", "\u{0}8", true),
        (r"(?i)abc", "ABC", true),
        (r"(?i:a)b", "Ab", true),
        (r"\pN\p{Greek}\PL\p{^L}", "1α11", true),
        (r"[[:^alpha:]]", "1", true),
        (r"\<\>", "<>", true),
        (r"x{1000}", &"x".repeat(1000), true),
        ("(?)a", "a", true),
        (r"\C", "x", true),
        (r"\bfoo\b", "a foo b", true),
        (r"\bfoo", "éfoo", true), // ASCII word boundary: é is not a word character
    ];
    for (pattern, text, matches) in cases {
        let translated = translate(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        let regex = regex::Regex::new(&translated.source).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        assert_eq!(regex.is_match(text), *matches, "{pattern} on {text:?} ({})", translated.source);
    }
}

#[test]
fn names_are_kept_aside_with_their_group_numbers() {
    let t = translate(r"(x)(?P<1a>y)(?<é>z)(?P<1a>w)").unwrap();
    assert_eq!(t.captures, 4);
    assert_eq!(t.names, vec![("1a".to_owned(), 2), ("é".to_owned(), 3)]);
    assert!(!t.source.contains('<'));
}
