//! The built-in sample page, so a monitor can be tried offline: the browser's proxy answers
//! `http://sample.hearth.invalid/…` itself, from memory — no name is resolved and no connection
//! is made (`.invalid` can never be a real site, RFC 2606). Its price moves every ten minutes,
//! so a monitor on it sees changes.

/// The sample page's host.
pub const SAMPLE_HOST: &str = "sample.hearth.invalid";
/// The sample shop's address.
pub const SAMPLE_URL: &str = "http://sample.hearth.invalid/shop";

/// The page at `now` (Unix ms).
pub fn page(now: i64) -> String {
    const PRICES: [&str; 3] = ["$24.00", "$21.50", "$19.99"];
    let window = now.div_euclid(10 * 60_000);
    let price = PRICES[usize::try_from(window.rem_euclid(3)).unwrap_or(0)];
    let stock = if window.rem_euclid(2) == 0 { "In stock" } else { "Only 2 left" };
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Hearth sample shop</title></head><body>\
         <h1>Garden hose, 25 m</h1><p>Price: {price}</p><p>{stock}</p>\
         <p>This page is built into Hearth for trying monitors offline; its price changes every ten minutes.</p>\
         </body></html>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_changes_every_ten_minutes() {
        let a = page(0);
        assert!(a.contains("$24.00") && a.contains("In stock"));
        assert_eq!(page(9 * 60_000), a);
        assert!(page(10 * 60_000).contains("$21.50"));
        assert!(page(20 * 60_000).contains("$19.99"));
    }
}
