use serde_json::Value;

use super::*;

#[test]
fn names_resolve_to_zulips_codes() {
    // Zulip's hand-picked names.
    assert_eq!(code_of("smile"), Some("1f604"));
    assert_eq!(code_of("slight_smile"), Some("1f642"));
    assert_eq!(code_of("smiling_face"), Some("263a"));
    assert_eq!(code_of("+1"), Some("1f44d"));
    assert_eq!(code_of("working_on_it"), Some("1f6e0"));
    assert_eq!(code_of("octopus"), Some("1f419"));
    // Named from the CLDR annotations.
    assert_eq!(code_of("avocado"), Some("1f951"));
    assert_eq!(code_of("kiss"), Some("1f48f"));
    // Not names.
    assert_eq!(code_of("not_an_emoji"), None);
    // Zulip's hand-picked alias of `no_signal`.
    assert_eq!(code_of("nope"), Some("1f645"));
    assert_eq!(code_of("Smile"), None);
    assert_eq!(code_of(""), None);
    assert_eq!(code_of("1f419"), None);
}

#[test]
fn aliases_resolve_to_their_emoji() {
    assert_eq!(code_of("thumbs_up"), Some("1f44d"));
    assert_eq!(code_of("like"), Some("1f44d"));
    assert_eq!(code_of("love"), Some("2764"));
    assert_eq!(code_of("pray"), Some("1f64f"));
    assert_eq!(code_of("tools"), Some("1f6e0"));
    // The ASCII spelling of a name with accents.
    assert_eq!(code_of("piñata"), Some("1fa85"));
    assert_eq!(code_of("pinata"), Some("1fa85"));
}

#[test]
fn sequences_have_dash_joined_codes_without_fe0f() {
    assert_eq!(code_of("rainbow_flag"), Some("1f3f3-200d-1f308"));
    assert_eq!(code_of("flag_united_states"), Some("1f1fa-1f1f8"));
    assert_eq!(code_of("hash"), Some("0023-20e3"));
    assert_eq!(code_of("eye_in_speech_bubble"), Some("1f441-200d-1f5e8"));
    assert_eq!(code_of("family_man_woman_girl_boy"), Some("1f468-200d-1f469-200d-1f467-200d-1f466"));
    assert!(is_code("1f3f3-200d-1f308"));
    assert!(!is_code("1f3f3-fe0f-200d-1f308"));
}

#[test]
fn codes_and_their_names() {
    assert!(is_code("1f419"));
    assert!(is_code("2764"));
    assert!(!is_code("zzzz"));
    assert!(!is_code("1F419"));
    assert!(!is_code(""));
    // Neither the bare skin tones nor the clock faces but one are emoji Zulip names.
    assert!(!is_code("1f3fb"));
    assert!(!is_code("1f550"));
    assert_eq!(names_of("1f557"), Some(&["time", "clock"][..]));
    assert_eq!(names_of("1f44d"), Some(&["+1", "thumbs_up", "like"][..]));
    assert_eq!(names_of("1f64f"), Some(&["folded_hands", "welcome", "thank_you", "namaste", "pray"][..]));
    assert_eq!(names_of("zzzz"), None);
}

#[test]
fn every_name_names_one_emoji_and_every_emoji_has_a_name() {
    let table = &*TABLE;
    assert!(table.emoji.len() > 1800, "{} emoji", table.emoji.len());
    assert_eq!(table.by_code.len(), table.emoji.len(), "a code appears twice");
    for (code, names) in &table.emoji {
        assert!(!names.is_empty(), "{code} has no name");
        // The canonical name is never another emoji's.
        assert_eq!(code_of(names[0]), Some(*code), "{}", names[0]);
        assert!(code.split('-').all(|p| p.len() >= 4 && p.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))));
        assert!(!code.split('-').any(|p| p == "fe0f"), "{code}");
    }
}

#[test]
fn the_data_file_lists_every_emoji_with_its_canonical_name_first() {
    let file = data_file();
    let data: Value = serde_json::from_slice(&file.body).unwrap();
    let map = data.as_object().unwrap();
    assert_eq!(map.keys().collect::<Vec<_>>(), ["code_to_names"]);
    let code_to_names = map["code_to_names"].as_object().unwrap();
    assert_eq!(code_to_names.len(), TABLE.emoji.len());
    assert_eq!(code_to_names["1f419"], serde_json::json!(["octopus"]));
    assert_eq!(code_to_names["1f44d"], serde_json::json!(["+1", "thumbs_up", "like"]));
    assert_eq!(code_to_names["1f604"], serde_json::json!(["smile"]));
    // Compact, as Zulip writes it.
    assert!(file.body.starts_with(br#"{"code_to_names":{"0023-20e3":["hash"],"#));
}

#[test]
fn the_data_file_path_carries_its_content_hash() {
    let file = data_file();
    let hash = file.path.strip_prefix("/static/generated/emoji/emoji_api.").unwrap().strip_suffix(".json").unwrap();
    let digest = Md5::digest(&file.body);
    let expected: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hash, expected);
    assert_eq!(file.hash, expected);
}
