//! Email addresses: one strict, boring shape, so what the owner reviews is what is sent.

/// Returns the bare address (`Name <a@b.example>` → `a@b.example`), with the domain
/// lower-cased, or says what is wrong with it.
pub fn normalize_address(input: &str) -> Result<String, String> {
    let trimmed = input.trim();
    let bare = match (trimmed.rfind('<'), trimmed.ends_with('>')) {
        (Some(open), true) => &trimmed[open + 1..trimmed.len() - 1],
        _ => trimmed,
    };
    let bad = || format!("{bare:?} is not an email address like name@example.com.");
    let (local, domain) = bare.split_once('@').ok_or_else(bad)?;
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~.-".contains(&b));
    let domain_ok = domain.len() <= 253
        && domain.contains('.')
        && domain.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if !local_ok || !domain_ok {
        return Err(bad());
    }
    Ok(format!("{local}@{}", domain.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn accepts_plain_and_named_addresses() {
        assert_eq!(normalize_address(" Ada <ada@Example.COM> ").unwrap(), "ada@example.com");
        assert_eq!(normalize_address("a.b+c@school.example").unwrap(), "a.b+c@school.example");
    }

    #[test]
    fn refuses_what_is_not_an_address() {
        for bad in ["", "ada", "ada@", "@example.com", "a..b@example.com", "ada@localhost", "a b@example.com", "ada@-x.com", "a@b@c.com"] {
            assert!(normalize_address(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
