//! File names from outside (mail attachments) made safe to show and to store.

const MAX_NAME_CHARS: usize = 180;

/// The last path component, without control, format (bidi overrides, zero-width) or reserved
/// characters, at most 180 characters, its extension kept (`document` when nothing is left).
pub fn safe_display_name(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let cleaned: String = last
        .chars()
        .map(|c| if c.is_control() || is_format_char(c) || matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') { '_' } else { c })
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim();
    let name = if cleaned.is_empty() { "document" } else { cleaned };
    name.chars().take(MAX_NAME_CHARS).collect::<String>().trim_end().to_owned()
}

/// [`safe_display_name`], ending in `.pdf` (what Files keeps).
pub fn sanitize_file_name(raw: &str) -> String {
    let cleaned = safe_display_name(raw);
    let stem = cleaned.strip_suffix(".pdf").or_else(|| cleaned.strip_suffix(".PDF")).unwrap_or(&cleaned).trim();
    let stem = if stem.is_empty() { "document" } else { stem };
    let stem: String = stem.chars().take(MAX_NAME_CHARS - 4).collect();
    format!("{}.pdf", stem.trim_end())
}

/// Unicode general category `Cf` (format: bidi embeddings, overrides and isolates, zero-width
/// spaces and joiners, the BOM, invisible operators, tags), plus the line and paragraph
/// separators. They change how a name is shown without showing themselves, so
/// `invoice\u{202E}fdp.exe` would read as `invoiceexe.pdf`. The categories come from the
/// `unicode-properties` tables (already in the tree through lopdf), not a hand-kept list.
pub fn is_format_char(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    matches!(c.general_category(), GeneralCategory::Format | GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_and_bounded() {
        assert_eq!(sanitize_file_name("../../etc/passwd"), "passwd.pdf");
        assert_eq!(sanitize_file_name("C:\\x\\form.PDF"), "form.pdf");
        assert_eq!(sanitize_file_name("a\u{0}b?.pdf"), "a_b_.pdf");
        assert_eq!(sanitize_file_name("  .hidden.pdf"), "hidden.pdf");
        assert_eq!(sanitize_file_name(""), "document.pdf");
        let long = sanitize_file_name(&"é".repeat(500));
        assert_eq!(long.chars().count(), 180);
        assert!(long.ends_with(".pdf"));
    }

    #[test]
    fn bidi_and_invisible_characters_never_reach_a_name() {
        let name = sanitize_file_name("invoice\u{202E}fdp.exe");
        assert!(!name.contains('\u{202E}'), "{name:?}");
        assert_eq!(name, "invoice_fdp.exe.pdf");
        for c in [
            '\u{202A}',
            '\u{202B}',
            '\u{202C}',
            '\u{202D}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{200E}',
            '\u{200F}',
            '\u{FEFF}',
            '\u{2060}',
            '\u{00AD}',
            '\u{061C}',
            '\u{E0041}',
            '\u{2028}',
        ] {
            let name = sanitize_file_name(&format!("a{c}b.pdf"));
            assert_eq!(name, "a_b.pdf", "U+{:04X}", c as u32);
        }
        // Letters from other scripts, accents and emoji stay.
        assert_eq!(sanitize_file_name("Überweisung ملف 📄.pdf"), "Überweisung ملف 📄.pdf");
        assert!(!is_format_char('a') && !is_format_char('é') && !is_format_char(' '));
        // Allow-list sanitizers (the task artifact names) rely on no format character being
        // alphanumeric.
        let format_chars: Vec<char> = (0..=0x10FFFF_u32).filter_map(char::from_u32).filter(|&c| is_format_char(c)).collect();
        assert!(format_chars.len() > 150, "{}", format_chars.len());
        assert!(format_chars.iter().all(|c| !c.is_alphanumeric()));
    }
}
