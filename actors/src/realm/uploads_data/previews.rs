//! Inline previews of uploaded images and videos in rendered messages (Zulip's
//! `InlineInterestingLinkProcessor` for `/user_uploads/` links, with the thumbnail markup
//! of `zerver/lib/thumbnail.py`).
//!
//! Each paragraph's links to an uploaded image or video (`.mp4`, `.webm`, and since level
//! 495 `.mov`) of the organization get a `<div class="message_inline_image">` (with
//! `message_inline_video` and a `<video>` for videos) after the paragraph, in order; a
//! paragraph that is only a link to an image is replaced by its preview. A preview whose thumbnail is made shows it
//! (`/user_uploads/thumbnail/<path_id>/840x560.webp`); one whose thumbnail is not made yet
//! shows Zulip's loading placeholder, and is rewritten once the thumbnail exists
//! ([`ready_preview`]).

use super::{Attachment, UploadsData};
use crate::markdown::escape_attr;
use crate::uploads::images::THUMBNAIL_FORMATS;

/// Zulip's spinner for previews whose thumbnail is not made yet.
pub const LOADING_SRC: &str = "/static/images/loading/loader-black.svg";

/// An image's `data-original-*` attributes, and the `src` of its `<img>`: its thumbnail,
/// or the loading placeholder (`true`).
fn image_parts(a: &Attachment) -> Option<(String, String, bool)> {
    let image = a.image.as_ref()?;
    let content_type = a.content_type.as_deref().map(|t| format!(" data-original-content-type=\"{}\"", escape_attr(t)));
    let attrs =
        format!("{} data-original-dimensions=\"{}x{}\"", content_type.unwrap_or_default(), image.width, image.height);
    let default = THUMBNAIL_FORMATS.first()?.name();
    Some(if image.thumbnails.contains(&default) {
        (attrs, format!("/user_uploads/thumbnail/{}/{default}", escape_attr(&a.path_id)), false)
    } else {
        (attrs, LOADING_SRC.to_owned(), true)
    })
}

/// The `<img>` of an image's preview: its thumbnail, or the loading placeholder.
fn preview_img(a: &Attachment) -> Option<String> {
    let (attrs, src, waiting) = image_parts(a)?;
    let class = if waiting { " class=\"image-loading-placeholder\"" } else { "" };
    Some(format!("<img{class}{attrs} src=\"{src}\">"))
}

/// What follows the `alt` of an image shown with Markdown image syntax (FL 437): Zulip's
/// `inline-image` markup, with `data-original-src` naming the uploaded file.
fn inline_img_tail(a: &Attachment) -> Option<String> {
    let (attrs, src, waiting) = image_parts(a)?;
    let class = if waiting { "inline-image image-loading-placeholder" } else { "inline-image" };
    Some(format!(
        " class=\"{class}\"{attrs} data-original-src=\"/user_uploads/{}\" src=\"{src}\">",
        escape_attr(&a.path_id)
    ))
}

/// Whether an upload is an audio file a player plays, by its name's extension (as Zulip
/// guesses the type from the URL).
pub fn is_audio(a: &Attachment) -> bool {
    let extension = a.path_id.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    a.image.is_none() && matches!(extension.as_str(), "mp3" | "wav" | "ogg" | "oga" | "opus" | "m4a" | "aac" | "flac")
}

/// The player of an uploaded audio file shown with Markdown image syntax (FL 405): Zulip's
/// `<audio>`, its attributes in Zulip's order, titled by the image's text when it has one.
fn audio_player(a: &Attachment, alt: &str) -> String {
    let title = alt.trim();
    let title = if title.is_empty() { String::new() } else { format!(" title=\"{title}\"") };
    format!(
        "<audio controls=\"\" preload=\"metadata\" src=\"/user_uploads/{}\"{title}></audio>",
        escape_attr(&a.path_id)
    )
}

/// Zulip writes `controls` bare: the sanitizer's `controls=""`, as Zulip has it.
pub fn audio_controls(html: &str) -> String {
    if html.contains("<audio controls=\"\"") {
        html.replace("<audio controls=\"\"", "<audio controls")
    } else {
        html.to_owned()
    }
}

/// Rewrites the renderer's `<img src="/user_uploads/..." alt="...">` (Markdown image syntax,
/// which messages allow only for uploaded images and audio files) into Zulip's
/// `inline-image` markup, or its audio player; whether an image is shown.
fn inline_images(uploads: &UploadsData, html: &str) -> (String, bool) {
    const START: &str = "<img src=\"/user_uploads/";
    let mut out = String::with_capacity(html.len() + 128);
    let mut any_image = false;
    let mut rest = html;
    while let Some(at) = rest.find(START) {
        out.push_str(&rest[..at]);
        let tag = &rest[at..];
        let end = tag.find('>').map_or(tag.len(), |i| i + 1);
        let (whole, after) = tag.split_at(end);
        let path = whole[START.len()..].split('"').next().unwrap_or_default();
        let alt = whole.split(" alt=\"").nth(1).and_then(|a| a.split('"').next()).unwrap_or_default();
        let upload = uploads.by_path(&unescape(path));
        if let Some(audio) = upload.filter(|a| is_audio(a)) {
            out.push_str(&audio_player(audio, alt));
            rest = after;
            continue;
        }
        match upload.and_then(inline_img_tail) {
            Some(tail) => {
                any_image = true;
                out.push_str("<img alt=\"");
                out.push_str(alt);
                out.push('"');
                out.push_str(&tail);
            }
            None => out.push_str(whole),
        }
        rest = after;
    }
    out.push_str(rest);
    (out, any_image)
}

/// Whether an upload is a video a preview plays: by its name's extension, as Zulip's
/// `is_video` guesses the type from the URL (`video/mp4`, `video/webm`, `video/quicktime`).
fn is_video(a: &Attachment) -> bool {
    let extension = a.path_id.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    matches!(extension.as_str(), "mp4" | "webm" | "mov")
}

/// The whole preview of an image or video linked with `title`.
fn preview(a: &Attachment, title: &str) -> Option<String> {
    if a.image.is_none() && is_video(a) {
        let url = format!("/user_uploads/{}", escape_attr(&a.path_id));
        return Some(format!(
            "<div class=\"message_inline_image message_inline_video\"><a href=\"{url}\" title=\"{}\">\
             <video preload=\"metadata\" src=\"{url}\"></video></a></div>",
            escape_attr(title)
        ));
    }
    Some(format!(
        "<div class=\"message_inline_image\"><a href=\"/user_uploads/{}\" title=\"{}\">{}</a></div>",
        escape_attr(&a.path_id),
        escape_attr(title),
        preview_img(a)?
    ))
}

/// The preview of `a` once its thumbnail is made, in place of its loading placeholder
/// (`None` if `html` shows no placeholder for it).
pub fn ready_preview(html: &str, a: &Attachment) -> Option<String> {
    let mut pending = a.clone();
    if let Some(image) = pending.image.as_mut() {
        image.thumbnails.clear();
    }
    let mut out = html.to_owned();
    for (old, new) in [(preview_img(&pending)?, preview_img(a)?), (inline_img_tail(&pending)?, inline_img_tail(a)?)] {
        if old != new {
            out = out.replace(&old, &new);
        }
    }
    (out != html).then_some(out)
}

/// Decodes the few entities the renderer writes in text, for a link's title.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&")
}

/// The uploaded images and videos a paragraph links (in order) and whether the paragraph
/// is only a link to one image.
fn linked_images<'u>(uploads: &'u UploadsData, paragraph: &str) -> (Vec<(&'u Attachment, String)>, bool) {
    let mut found = Vec::new();
    let mut rest = paragraph;
    while let Some(at) = rest.find("<a href=\"/user_uploads/") {
        let after = &rest[at + "<a href=\"/user_uploads/".len()..];
        let Some(end) = after.find('"') else { break };
        let path_id = unescape(&after[..end]);
        let text_start = after.find('>').map_or(after.len(), |i| i + 1);
        let text_end = after[text_start..].find("</a>").map_or(after.len(), |i| text_start + i);
        let text = &after[text_start..text_end];
        if let Some(a) = uploads.by_path(&path_id).filter(|a| a.image.is_some() || is_video(a)) {
            let title = if text.contains('<') { a.name.clone() } else { unescape(text) };
            found.push((a, title));
        }
        rest = &after[text_end..];
    }
    let only = found.len() == 1 && found[0].0.image.is_some() && {
        let inner = paragraph.trim_start_matches("<p>").trim_end_matches("</p>");
        inner.starts_with("<a href=\"/user_uploads/") && inner.ends_with("</a>") && inner.matches("<a ").count() == 1
    };
    (found, only)
}

/// Adds the previews of uploaded images and videos to rendered HTML; whether an image's
/// was added (the message then has an image, for `has:image`).
pub fn add_previews(uploads: &UploadsData, html: &str) -> (String, bool) {
    if !html.contains("/user_uploads/") {
        return (html.to_owned(), false);
    }
    let (inlined, mut any) = inline_images(uploads, html);
    let html = inlined.as_str();
    let mut out = String::with_capacity(html.len() + 256);
    let mut rest = html;
    while let Some(start) = rest.find("<p>") {
        let Some(len) = rest[start..].find("</p>").map(|i| i + "</p>".len()) else { break };
        out.push_str(&rest[..start]);
        let paragraph = &rest[start..start + len];
        let (linked, only) = linked_images(uploads, paragraph);
        let previews: Vec<String> = linked.iter().filter_map(|(a, title)| preview(a, title)).collect();
        any |= linked.iter().any(|(a, _)| a.image.is_some());
        if !(only && previews.len() == 1) {
            out.push_str(paragraph);
            if !previews.is_empty() {
                // Zulip's previews follow their paragraph on a line of their own.
                out.push('\n');
            }
        }
        for p in previews {
            out.push_str(&p);
        }
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    (out, any)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::UserId;
    use crate::realm::uploads_data::ImageMeta;

    fn uploads(ready: bool) -> UploadsData {
        let mut data = UploadsData::default();
        data.put(Attachment {
            id: 1,
            owner_id: UserId(1),
            path_id: "2/ab/XyZ/a.png".into(),
            name: "a.png".into(),
            size: 10,
            content_type: Some("image/png".into()),
            create_time: 0,
            is_realm_public: false,
            is_web_public: false,
            image: Some(ImageMeta {
                width: 1000,
                height: 800,
                frames: 1,
                thumbnails: if ready { vec!["840x560.webp".into()] } else { vec![] },
            }),
        });
        data
    }

    #[test]
    fn a_lone_image_link_becomes_its_preview() {
        let html = "<p><a href=\"/user_uploads/2/ab/XyZ/a.png\">a.png</a></p>";
        let (out, any) = add_previews(&uploads(true), html);
        assert!(any);
        assert_eq!(
            out,
            "<div class=\"message_inline_image\"><a href=\"/user_uploads/2/ab/XyZ/a.png\" title=\"a.png\">\
             <img data-original-content-type=\"image/png\" data-original-dimensions=\"1000x800\" \
             src=\"/user_uploads/thumbnail/2/ab/XyZ/a.png/840x560.webp\"></a></div>"
        );
    }

    #[test]
    fn a_pending_thumbnail_shows_the_placeholder_until_ready() {
        let html = "<p>look <a href=\"/user_uploads/2/ab/XyZ/a.png\">this</a></p>";
        let (out, _) = add_previews(&uploads(false), html);
        assert_eq!(
            out,
            "<p>look <a href=\"/user_uploads/2/ab/XyZ/a.png\">this</a></p>\n<div class=\"message_inline_image\">\
             <a href=\"/user_uploads/2/ab/XyZ/a.png\" title=\"this\"><img class=\"image-loading-placeholder\" \
             data-original-content-type=\"image/png\" data-original-dimensions=\"1000x800\" \
             src=\"/static/images/loading/loader-black.svg\"></a></div>"
        );
        let ready = uploads(true);
        let rewritten = ready_preview(&out, ready.by_id(1).unwrap()).unwrap();
        assert_eq!(rewritten, add_previews(&ready, html).0);
        assert_eq!(ready_preview(&rewritten, ready.by_id(1).unwrap()), None);
    }

    #[test]
    fn other_links_get_no_preview() {
        let html = "<p><a href=\"/user_uploads/2/ab/Other/b.png\">b</a> <a href=\"https://x.example\">x</a></p>";
        assert_eq!(add_previews(&uploads(true), html), (html.to_owned(), false));
    }
}

#[cfg(test)]
mod video_tests {
    use super::*;
    use crate::ids::UserId;

    fn video(name: &str) -> UploadsData {
        let mut data = UploadsData::default();
        data.put(Attachment {
            id: 1,
            owner_id: UserId(1),
            path_id: format!("2/ab/XyZ/{name}"),
            name: name.into(),
            size: 10,
            content_type: Some("video/quicktime".into()),
            create_time: 0,
            is_realm_public: false,
            is_web_public: false,
            image: None,
        });
        data
    }

    #[test]
    fn an_uploaded_video_plays_inline_after_its_paragraph() {
        for name in ["clip.mp4", "clip.webm", "Clip.MOV"] {
            let html = format!("<p><a href=\"/user_uploads/2/ab/XyZ/{name}\">{name}</a></p>");
            let (out, image) = add_previews(&video(name), &html);
            assert!(!image, "a video is no image");
            assert_eq!(
                out,
                format!(
                    "{html}\n<div class=\"message_inline_image message_inline_video\">\
                     <a href=\"/user_uploads/2/ab/XyZ/{name}\" title=\"{name}\"><video preload=\"metadata\" \
                     src=\"/user_uploads/2/ab/XyZ/{name}\"></video></a></div>"
                )
            );
            assert_eq!(crate::markdown::sanitize::clean(&out), out, "the sanitizer keeps it");
        }
        let other = "<p><a href=\"/user_uploads/2/ab/XyZ/clip.avi\">clip.avi</a></p>";
        assert_eq!(add_previews(&video("clip.avi"), other), (other.to_owned(), false));
    }
}
