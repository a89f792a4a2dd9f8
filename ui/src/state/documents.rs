//! The Documents screen's data: a hit's passage split into plain and matched parts (FTS5's
//! `snippet()` puts the matched words between `[` and `]`), and a folder's one-line summary.

use hearth_protocol::documents::DocFolderView;

/// A piece of a passage: its text and whether it is a matched word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassagePart {
    /// The text.
    pub text: String,
    /// A matched word (shown marked).
    pub matched: bool,
}

/// `passage` as plain and matched parts; an unclosed `[` keeps the rest plain.
pub fn passage_parts(passage: &str) -> Vec<PassagePart> {
    let mut parts = Vec::new();
    let mut rest = passage;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else { break };
        if open > 0 {
            parts.push(PassagePart { text: rest[..open].to_owned(), matched: false });
        }
        parts.push(PassagePart { text: rest[open + 1..close].to_owned(), matched: true });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(PassagePart { text: rest.to_owned(), matched: false });
    }
    parts
}

/// "120 files indexed, 2 not read" (with the text's size).
pub fn folder_summary(folder: &DocFolderView) -> String {
    let files = if folder.files == 1 { "1 file".to_owned() } else { format!("{} files", folder.files) };
    let size = format!("{:.1} MB of text", folder.text_bytes as f64 / (1024.0 * 1024.0));
    match folder.skipped_count {
        0 => format!("{files} indexed, {size}"),
        n => format!("{files} indexed, {size}, {n} not read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str, matched: bool) -> PassagePart {
        PassagePart { text: text.into(), matched }
    }

    #[test]
    fn a_passage_splits_at_its_marks() {
        assert_eq!(
            passage_parts("…the [orchard] needs [pruning]."),
            vec![part("…the ", false), part("orchard", true), part(" needs ", false), part("pruning", true), part(".", false)]
        );
        assert_eq!(passage_parts("[a]"), vec![part("a", true)]);
        assert_eq!(passage_parts("open [bracket"), vec![part("open [bracket", false)]);
        assert!(passage_parts("").is_empty());
    }
}
