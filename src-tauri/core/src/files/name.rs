//! File names from outside (mail attachments) made safe to show and to store.

const MAX_NAME_CHARS: usize = 180;

/// The last path component, without control or reserved characters, at most 180
/// characters, ending in `.pdf`.
pub fn sanitize_file_name(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let cleaned: String = last
        .chars()
        .map(|c| if c.is_control() || matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') { '_' } else { c })
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim();
    let stem = cleaned.strip_suffix(".pdf").or_else(|| cleaned.strip_suffix(".PDF")).unwrap_or(cleaned).trim();
    let stem = if stem.is_empty() { "document" } else { stem };
    let stem: String = stem.chars().take(MAX_NAME_CHARS - 4).collect();
    format!("{}.pdf", stem.trim_end())
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
}
