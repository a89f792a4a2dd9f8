//! Characters a reader cannot see, made visible.
//!
//! Text written by others can carry characters that show as nothing — zero-width spaces and
//! joiners, Unicode tag characters (which can spell out a whole hidden sentence), the
//! bidirectional controls that reorder what follows (so `evil.example/moc.knab` reads as a
//! bank's address) and other control characters. On an approval card the owner must see
//! exactly what they approve, so every card's text goes through [`reveal`]: each such
//! character becomes a visible `⟦U+XXXX⟧`, and the card says how many there were.

/// Whether `c` shows as nothing (or reorders what follows) and must be made visible.
/// Newlines and tabs are layout, not hidden.
pub const fn is_hidden(c: char) -> bool {
    matches!(
        c,
        // C0 and C1 controls, but line breaks and tabs.
        '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{7F}'..='\u{9F}'
        // Soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers.
        | '\u{AD}' | '\u{34F}' | '\u{61C}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}'
        // Mongolian vowel separator; zero-width space, non-joiner, joiner; LRM, RLM.
        | '\u{180E}' | '\u{200B}'..='\u{200F}'
        // Line and paragraph separators; bidi embeddings and overrides (LRE … RLO).
        | '\u{2028}'..='\u{202E}'
        // Word joiner, invisible operators, bidi isolates (LRI … PDI), deprecated format chars.
        | '\u{2060}'..='\u{206F}'
        // Byte order mark / zero-width no-break space; interlinear annotation controls.
        | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}'
        // Unicode tag characters (can spell hidden text) and the supplementary variation selectors.
        | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}'
    )
}

/// How many hidden characters `text` holds.
pub fn hidden_count(text: &str) -> usize {
    text.chars().filter(|&c| is_hidden(c)).count()
}

/// `text` with every hidden character written as `⟦U+XXXX⟧`, and how many there were.
pub fn reveal(text: &str) -> (String, usize) {
    let hidden = hidden_count(text);
    if hidden == 0 {
        return (text.to_owned(), 0);
    }
    let mut out = String::with_capacity(text.len() + hidden * 10);
    for c in text.chars() {
        if is_hidden(c) {
            out.push_str(&format!("⟦U+{:04X}⟧", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    (out, hidden)
}

/// Every string inside `value` (keys included) revealed in place; returns how many hidden
/// characters there were in all.
pub fn reveal_json(value: &mut serde_json::Value) -> usize {
    match value {
        serde_json::Value::String(text) => {
            let (shown, hidden) = reveal(text);
            *text = shown;
            hidden
        }
        serde_json::Value::Array(items) => items.iter_mut().map(reveal_json).sum(),
        serde_json::Value::Object(map) => {
            let mut hidden = 0;
            let entries = std::mem::take(map);
            for (key, mut item) in entries {
                let (key, in_key) = reveal(&key);
                hidden += in_key + reveal_json(&mut item);
                map.insert(key, item);
            }
            hidden
        }
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn zero_width_bidi_and_tag_characters_are_shown_and_counted() {
        let text = "Pay\u{200B} bob\u{202E}moc.knab\u{202C} \u{E0041}\u{E0042}ok\n\tnext";
        let (shown, hidden) = reveal(text);
        assert_eq!(hidden, 5);
        assert_eq!(shown, "Pay⟦U+200B⟧ bob⟦U+202E⟧moc.knab⟦U+202C⟧ ⟦U+E0041⟧⟦U+E0042⟧ok\n\tnext");
    }

    #[test]
    fn ordinary_text_is_untouched() {
        let text = "Grüße, 日本語, emoji 👍🏽 and a tab\there";
        assert_eq!(reveal(text), (text.to_owned(), 0));
    }

    #[test]
    fn every_string_of_a_json_value_is_revealed() {
        let mut value = serde_json::json!({ "to": ["a\u{200D}@x.example"], "body": "hi\u{2066}", "n": 3, "k\u{FEFF}": true });
        assert_eq!(reveal_json(&mut value), 3);
        assert_eq!(value["to"][0], "a⟦U+200D⟧@x.example");
        assert_eq!(value["body"], "hi⟦U+2066⟧");
        assert_eq!(value["k⟦U+FEFF⟧"], true);
    }
}
