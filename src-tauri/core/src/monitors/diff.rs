//! What changed on a watched page, line by line, bounded: the notice shows it.

use similar::{ChangeTag, DiffTag, TextDiff};

/// At most this many lines of each kind are listed.
const MAX_LINES: usize = 10;
/// A listed line is cut to this many characters.
const MAX_LINE: usize = 200;

/// The page's text as the monitor compares it: each line trimmed with its runs of spaces
/// collapsed, empty lines dropped, every line ended by a newline (so the last line compares
/// equal to the same line elsewhere).
pub fn normalize(text: &str) -> String {
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .map(|line| line + "\n")
        .collect()
}

/// Which list a line goes to.
#[derive(Clone, Copy)]
enum Kind {
    New,
    Changed,
    Removed,
}

/// New, changed and removed lines between two normalized texts.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LineDiff {
    /// Lines that are new.
    pub new: Vec<String>,
    /// Lines that replaced others (the new text).
    pub changed: Vec<String>,
    /// Lines that are gone.
    pub removed: Vec<String>,
    /// More lines changed than listed.
    pub more: usize,
}

impl LineDiff {
    /// Diffs `old` against `new` (both from [`normalize`]).
    pub fn between(old: &str, new: &str) -> Self {
        let diff = TextDiff::from_lines(old, new);
        let mut out = LineDiff::default();
        let line = |value: &str| value.trim_end().chars().take(MAX_LINE).collect::<String>();
        for op in diff.ops() {
            let (deleted, inserted): (Vec<String>, Vec<String>) = {
                let (mut d, mut i) = (Vec::new(), Vec::new());
                for change in diff.iter_changes(op) {
                    match change.tag() {
                        ChangeTag::Equal => {}
                        ChangeTag::Delete => d.push(line(change.value())),
                        ChangeTag::Insert => i.push(line(change.value())),
                    }
                }
                (d, i)
            };
            // A replaced run pairs its lines: as many as both sides have are changed, the rest
            // of the old side removed, the rest of the new side new.
            let paired = if op.tag() == DiffTag::Replace { deleted.len().min(inserted.len()) } else { 0 };
            out.push(Kind::Changed, &inserted[..paired]);
            out.push(Kind::Removed, &deleted[paired..]);
            out.push(Kind::New, &inserted[paired..]);
        }
        out
    }

    fn push(&mut self, kind: Kind, lines: &[String]) {
        for line in lines {
            let list = match kind {
                Kind::New => &mut self.new,
                Kind::Changed => &mut self.changed,
                Kind::Removed => &mut self.removed,
            };
            if list.len() < MAX_LINES {
                list.push(line.clone());
            } else {
                self.more += 1;
            }
        }
    }

    /// For a notice: `+ new`, `~ changed`, `- removed` lines.
    pub fn render(&self) -> String {
        let mut lines = Vec::new();
        lines.extend(self.new.iter().map(|l| format!("+ {l}")));
        lines.extend(self.changed.iter().map(|l| format!("~ {l}")));
        lines.extend(self.removed.iter().map(|l| format!("- {l}")));
        if self.more > 0 {
            lines.push(format!("… and {} more lines", self.more));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_changed_and_removed_lines() {
        let old = normalize("Title\n  Price:   $20  \nIn stock\nShips today");
        let new = normalize("Title\nPrice: $18\nShips today\nSale ends Friday\n\n");
        let diff = LineDiff::between(&old, &new);
        assert_eq!(diff.changed, ["Price: $18"]);
        assert_eq!(diff.removed, ["In stock"]);
        assert_eq!(diff.new, ["Sale ends Friday"]);
        assert_eq!(diff.render(), "+ Sale ends Friday\n~ Price: $18\n- In stock");
    }

    #[test]
    fn the_listing_is_bounded() {
        let old = String::new();
        let new: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let diff = LineDiff::between(&old, &normalize(&new));
        assert_eq!(diff.new.len(), 10);
        assert_eq!(diff.more, 40);
    }
}
