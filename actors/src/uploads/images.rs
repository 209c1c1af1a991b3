//! Images made from uploads (Zulip's `zerver/lib/thumbnail.py`, with the `image` crate in
//! place of libvips): the header probe that decides whether an upload gets a preview,
//! thumbnails in the formats `server_thumbnail_formats` advertises, avatars (square, PNG,
//! 100 and 500 pixels) and custom emoji (square, PNG, 64 pixels).
//!
//! Every decode is bounded: images over Zulip's `IMAGE_BOMB_TOTAL_PIXELS` are refused
//! before their pixels are read, and the decoder's allocations are limited.

use std::io::Cursor;

use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// Zulip's `DEFAULT_AVATAR_SIZE`.
pub const AVATAR_SIZE: u32 = 100;
/// Zulip's `MEDIUM_AVATAR_SIZE`.
pub const MEDIUM_AVATAR_SIZE: u32 = 500;
/// Zulip's `DEFAULT_EMOJI_SIZE`.
pub const EMOJI_SIZE: u32 = 64;
/// Zulip's `IMAGE_BOMB_TOTAL_PIXELS`.
pub const MAX_PIXELS: u64 = 90_000_000;

/// A thumbnail format (Zulip's `ThumbnailFormat`): named `<w>x<h>[-anim].<ext>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThumbnailFormat {
    pub max_width: u32,
    pub max_height: u32,
    pub animated: bool,
    pub extension: &'static str,
}

impl ThumbnailFormat {
    /// The format's name, as in thumbnail URLs.
    pub fn name(&self) -> String {
        let anim = if self.animated { "-anim" } else { "" };
        format!("{}x{}{anim}.{}", self.max_width, self.max_height, self.extension)
    }
}

/// The formats made for every image (Zulip's still `THUMBNAIL_OUTPUT_FORMATS`; the first
/// is the one written into rendered messages). Animated images get the still format of
/// their first frame: no animated WebP encoder is at hand.
pub const THUMBNAIL_FORMATS: &[ThumbnailFormat] =
    &[ThumbnailFormat { max_width: 840, max_height: 560, animated: false, extension: "webp" }];

/// Content types that browsers show safely inline (Zulip's `INLINE_MIME_TYPES`); any
/// other file is served as an attachment.
pub const INLINE_MIME_TYPES: &[&str] = &[
    "application/pdf",
    "audio/aac",
    "audio/flac",
    "audio/mp4",
    "audio/mpeg",
    "audio/wav",
    "audio/webm",
    "image/apng",
    "image/avif",
    "image/gif",
    "image/jpeg",
    "image/png",
    "image/webp",
    "text/plain",
    "video/mp4",
    "video/webm",
];

/// The image types whose uploads get previews (Zulip's `THUMBNAIL_ACCEPT_IMAGE_TYPES`,
/// less the ones this decoder cannot read: AVIF, HEIC, TIFF, SVG).
pub const THUMBNAIL_ACCEPT_IMAGE_TYPES: &[&str] = &["image/gif", "image/jpeg", "image/png", "image/webp"];

/// What the header of an image says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    pub width: u32,
    pub height: u32,
    pub frames: u32,
}

/// Why an image could not be used (Zulip's `BadImageError` messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadImage(pub &'static str);

const UNDECODABLE: BadImage = BadImage("Could not decode image; did you upload an image file?");
const TOO_LARGE: BadImage = BadImage("Image size exceeds limit.");

fn reader(bytes: &[u8]) -> Result<ImageReader<Cursor<&[u8]>>, BadImage> {
    let mut reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format().map_err(|_| UNDECODABLE)?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_PIXELS * 4 + (64 << 20));
    reader.limits(limits);
    Ok(reader)
}

/// The dimensions of an image whose content type asks for a preview, read from its
/// header only; `None` for anything else (not an accepted type, not decodable, too many
/// pixels), which is then a plain file.
pub fn probe(bytes: &[u8], content_type: Option<&str>) -> Option<ImageInfo> {
    if !content_type.is_some_and(|t| THUMBNAIL_ACCEPT_IMAGE_TYPES.contains(&t)) {
        return None;
    }
    let reader = reader(bytes).ok()?;
    reader.format()?;
    let (width, height) = reader.into_dimensions().ok()?;
    if u64::from(width) * u64::from(height) > MAX_PIXELS || width == 0 || height == 0 {
        return None;
    }
    Some(ImageInfo { width, height, frames: 1 })
}

/// [`probe`] of a stored file, reading only its header.
pub fn probe_reader<R: std::io::BufRead + std::io::Seek>(reader: R, content_type: Option<&str>) -> Option<ImageInfo> {
    if !content_type.is_some_and(|t| THUMBNAIL_ACCEPT_IMAGE_TYPES.contains(&t)) {
        return None;
    }
    let reader = ImageReader::new(reader).with_guessed_format().ok()?;
    reader.format()?;
    let (width, height) = reader.into_dimensions().ok()?;
    if u64::from(width) * u64::from(height) > MAX_PIXELS || width == 0 || height == 0 {
        return None;
    }
    Some(ImageInfo { width, height, frames: 1 })
}

/// The decoded image, within the pixel limit.
fn decode(bytes: &[u8]) -> Result<DynamicImage, BadImage> {
    let (width, height) = reader(bytes)?.into_dimensions().map_err(|_| UNDECODABLE)?;
    let reader = reader(bytes)?;
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(TOO_LARGE);
    }
    reader.decode().map_err(|_| UNDECODABLE)
}

fn encode(image: &DynamicImage, format: ImageFormat) -> Result<Vec<u8>, BadImage> {
    let mut out = Cursor::new(Vec::new());
    let image = match format {
        // The WebP encoder takes 8-bit RGB(A) only.
        ImageFormat::WebP if image.color().has_alpha() => DynamicImage::ImageRgba8(image.to_rgba8()),
        ImageFormat::WebP => DynamicImage::ImageRgb8(image.to_rgb8()),
        _ => image.clone(),
    };
    image.write_to(&mut out, format).map_err(|_| BadImage("Image is corrupted or truncated"))?;
    Ok(out.into_inner())
}

/// A thumbnail in `format`: the image scaled down (never up) to fit the format's box,
/// keeping its proportions; with its width and height.
pub fn thumbnail(bytes: &[u8], format: &ThumbnailFormat) -> Result<(Vec<u8>, u32, u32), BadImage> {
    let image = decode(bytes)?;
    let image = if image.width() > format.max_width || image.height() > format.max_height {
        image.resize(format.max_width, format.max_height, FilterType::Triangle)
    } else {
        image
    };
    let (w, h) = (image.width(), image.height());
    Ok((encode(&image, ImageFormat::WebP)?, w, h))
}

/// A square PNG of `size` pixels: the smaller side scaled to fit, the larger cropped
/// around the centre (Zulip's `resize_avatar`, also used for emoji).
pub fn square_png(bytes: &[u8], size: u32) -> Result<Vec<u8>, BadImage> {
    let image = decode(bytes)?;
    let image = image.resize_to_fill(size, size, FilterType::Triangle);
    encode(&image, ImageFormat::Png)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = DynamicImage::ImageRgb8(image::RgbImage::from_pixel(width, height, image::Rgb([200, 10, 10])));
        encode(&image, ImageFormat::Png).unwrap()
    }

    #[test]
    fn images_are_probed_by_their_header() {
        let bytes = png(1000, 800);
        assert_eq!(probe(&bytes, Some("image/png")), Some(ImageInfo { width: 1000, height: 800, frames: 1 }));
        assert_eq!(probe(&bytes, Some("text/plain")), None);
        assert_eq!(probe(&bytes, None), None);
        assert_eq!(probe(b"not an image", Some("image/png")), None);
    }

    #[test]
    fn thumbnails_fit_their_box_and_never_grow() {
        let (webp, w, h) = thumbnail(&png(1200, 1200), &THUMBNAIL_FORMATS[0]).unwrap();
        assert_eq!((w, h), (560, 560));
        assert_eq!(image::guess_format(&webp).unwrap(), ImageFormat::WebP);
        let (_, w, h) = thumbnail(&png(40, 30), &THUMBNAIL_FORMATS[0]).unwrap();
        assert_eq!((w, h), (40, 30));
        assert_eq!(THUMBNAIL_FORMATS[0].name(), "840x560.webp");
    }

    #[test]
    fn avatars_are_square_pngs() {
        let out = square_png(&png(300, 100), AVATAR_SIZE).unwrap();
        let image = image::load_from_memory(&out).unwrap();
        assert_eq!((image.width(), image.height()), (100, 100));
        assert_eq!(square_png(b"junk", 100), Err(UNDECODABLE));
    }
}
