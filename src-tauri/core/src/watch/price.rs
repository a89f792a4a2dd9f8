//! Prices on a page, for the `price_below` condition. Hand-written over a regex because what
//! must be refused is about the characters around a number, not its shape alone: "$9k" and
//! "$9M" are not 9, and "$12" inside "$1234" or "12.50" inside "12.505" is not a price at all.
//!
//! A price is an optional currency sign ($, €, £, ¥), digits with optional thousands
//! separators (`,` in groups of three), and at most two decimals after a point; it must not
//! touch a digit, a letter or another separator on either side.

/// Every price on `text`, in cents, in order.
pub fn prices(text: &str) -> Vec<i64> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        // A number starts here only if nothing number-like is glued before it.
        let before = i.checked_sub(1).map(|j| chars[j]);
        if before.is_some_and(|c| c.is_alphanumeric() || c == '.' || c == ',') {
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == ',') {
                i += 1;
            }
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == ',' || chars[i] == '.') {
            i += 1;
        }
        let mut token: String = chars[start..i].iter().collect();
        // A trailing separator ends a sentence ("costs 12.", "12, 13"), it is not the number's.
        while token.ends_with(['.', ',']) {
            token.pop();
        }
        let after = chars.get(start + token.chars().count()).copied();
        let glued = after.is_some_and(|c| c.is_alphanumeric());
        if !glued && let Some(cents) = cents_of(&token) {
            found.push(cents);
        }
    }
    found
}

/// `1,234.50` → 123450; `12` → 1200; anything else (`1,23`, `12.345`, `1.2.3`) → None.
fn cents_of(token: &str) -> Option<i64> {
    let (whole, fraction) = match token.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (token, None),
    };
    if let Some(f) = fraction
        && (f.is_empty() || f.len() > 2 || !f.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let groups: Vec<&str> = whole.split(',').collect();
    let grouped = groups.len() > 1;
    if groups[0].is_empty() || groups[0].len() > if grouped { 3 } else { 15 } {
        return None;
    }
    if grouped && groups[1..].iter().any(|g| g.len() != 3) {
        return None;
    }
    let digits: String = groups.concat();
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: i64 = digits.parse().ok()?;
    let fraction: i64 = match fraction {
        Some(f) => format!("{f:0<2}").parse().ok()?,
        None => 0,
    };
    whole.checked_mul(100)?.checked_add(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_prices_with_signs_and_separators() {
        assert_eq!(prices("Now $19.99, was $24"), [1999, 2400]);
        assert_eq!(prices("€1,299.00 only"), [129_900]);
        assert_eq!(prices("Price: 7.5 EUR"), [750]);
        assert_eq!(prices("costs 12."), [1200]);
    }

    #[test]
    fn multipliers_and_digit_continuations_are_not_prices() {
        assert!(prices("$9k").is_empty());
        assert!(prices("$9M").is_empty());
        assert!(prices("9m2 flat").is_empty());
        assert!(prices("12.505").is_empty());
        assert!(prices("1,23").is_empty());
        assert!(prices("SKU A123").is_empty());
        assert!(prices("1.2.3").is_empty());
        assert_eq!(prices("model X200 for $450"), [45_000]);
    }
}
