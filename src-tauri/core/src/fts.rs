//! The one way text typed by a person or a model becomes an FTS5 query (memory recall and
//! document search both use it): distinct words, each quoted, so nothing typed is FTS syntax
//! (`NEAR`, `*`, `-`, column filters, unbalanced quotes) and no query can fail to parse.

/// At most this many words of the message are looked up.
const MAX_TERMS: usize = 32;

/// Words that say nothing about what is relevant.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "your", "with", "have", "has", "had", "this", "that", "what", "when", "where",
    "which", "who", "why", "how", "can", "could", "would", "should", "will", "about", "from", "into", "some", "any", "all", "was", "were",
    "been", "there", "their", "them", "they", "then", "than", "our", "out", "get", "got", "let", "make", "please", "tell", "give", "want",
    "need", "just", "also", "does", "did", "its", "it's", "i'm", "me",
];

/// The FTS5 query for a message: its distinct words of three letters or more that are not
/// stopwords, each quoted (so nothing in the message is FTS syntax), joined by OR. `None` when
/// no word is left.
pub fn words_query(text: &str) -> Option<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() >= 3) {
        let word = word.to_lowercase();
        if STOPWORDS.contains(&word.as_str()) || terms.contains(&word) {
            continue;
        }
        terms.push(word);
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    (!terms.is_empty()).then(|| terms.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(" OR "))
}
