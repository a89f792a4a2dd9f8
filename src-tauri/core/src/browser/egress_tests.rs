//! The egress policy as a table: hostile URLs, each refused for its own reason, and public
//! ones that pass.
#![allow(clippy::unwrap_used)]

use super::*;

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

fn refusal(text: &str) -> Refusal {
    match check_url(&url(text), &AllowList::none()) {
        Err(refusal) => refusal,
        Ok(destination) => panic!("{text} passed as {destination}"),
    }
}

fn range_of(text: &str) -> &'static str {
    match refusal(text) {
        Refusal::Address { range, .. } => range,
        other => panic!("{text}: refused as {other:?}, not for its address"),
    }
}

#[test]
fn the_tables_parse_whole() {
    assert_eq!(V4.len(), REFUSED_V4.len());
    assert_eq!(V6.len(), REFUSED_V6_GLOBAL.len());
}

/// Loopback in the spellings the WHATWG parser accepts, each refused as loopback.
#[test]
fn loopback_in_every_spelling_is_loopback() {
    for text in [
        "http://127.0.0.1/",
        "http://127.1/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://127.000.000.001/",
        "http://0x7f.1/",
        "http://127.255.255.254/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:7f00:1]/",
        "https://[::127.0.0.1]/",
        "https://[64:ff9b::7f00:1]/",
    ] {
        assert_eq!(range_of(text), "loopback (127.0.0.0/8)", "{text}");
    }
    assert_eq!(range_of("http://[::1]/"), "loopback (::1)");
    assert_eq!(range_of("http://[0:0:0:0:0:0:0:1]/"), "loopback (::1)");
}

#[test]
fn local_names_are_refused_before_any_lookup() {
    for (text, suffix) in [
        ("http://localhost/", "localhost"),
        ("http://localhost./", "localhost"),
        ("http://LOCALHOST/", "localhost"),
        ("http://app.localhost/", "localhost"),
        ("http://printer.local/", "local"),
        ("http://db.internal/", "internal"),
        ("http://metadata.google.internal/", "internal"),
        ("http://nas.lan/", "lan"),
        ("http://router.home.arpa/", "home.arpa"),
    ] {
        assert!(matches!(refusal(text), Refusal::LocalName { suffix: s, .. } if s == suffix), "{text}");
    }
    // An empty label is no host: `localhost..` does not slip past the suffix check.
    for text in ["http://localhost../", "http://db.internal../", "http://a..b.example/"] {
        assert!(matches!(refusal(text), Refusal::BadName(_)), "{text}: {:?}", refusal(text));
    }
    // Only whole labels count: these are public names.
    for text in ["http://notlocalhost.com/", "https://locallan.example/", "https://internal.example.com/"] {
        assert!(check_url(&url(text), &AllowList::none()).is_ok(), "{text}");
    }
}

/// Every named IPv4 range, by an address inside it.
#[test]
fn every_refused_v4_range_is_named() {
    for (text, range) in [
        ("http://0.0.0.0/", "in \"this network\" (0.0.0.0/8)"),
        ("http://0/", "in \"this network\" (0.0.0.0/8)"),
        ("http://10.0.0.1/", "private (10.0.0.0/8)"),
        ("http://10.255.255.255/", "private (10.0.0.0/8)"),
        ("http://100.64.0.1/", "shared carrier-grade NAT space (100.64.0.0/10)"),
        ("http://100.127.255.254/", "shared carrier-grade NAT space (100.64.0.0/10)"),
        ("http://169.254.169.254/latest/meta-data/", "link-local (169.254.0.0/16, where cloud metadata lives)"),
        ("http://172.16.0.1/", "private (172.16.0.0/12)"),
        ("http://172.31.255.1/", "private (172.16.0.0/12)"),
        ("http://192.0.0.8/", "IETF protocol assignments (192.0.0.0/24)"),
        ("http://192.0.2.1/", "documentation (192.0.2.0/24)"),
        ("http://192.88.99.1/", "6to4 relay anycast (192.88.99.0/24)"),
        ("http://192.168.1.1/", "private (192.168.0.0/16)"),
        ("http://0xc0a80101/", "private (192.168.0.0/16)"),
        ("http://198.18.0.1/", "benchmarking (198.18.0.0/15)"),
        ("http://198.19.255.1/", "benchmarking (198.18.0.0/15)"),
        ("http://198.51.100.7/", "documentation (198.51.100.0/24)"),
        ("http://203.0.113.9/", "documentation (203.0.113.0/24)"),
        ("http://224.0.0.1/", "multicast (224.0.0.0/4)"),
        ("http://239.255.255.250/", "multicast (224.0.0.0/4)"),
        ("http://240.0.0.1/", "reserved or broadcast (240.0.0.0/4)"),
        ("http://255.255.255.255/", "reserved or broadcast (240.0.0.0/4)"),
    ] {
        assert_eq!(range_of(text), range, "{text}");
    }
}

#[test]
fn ipv6_outside_public_unicast_is_refused() {
    for (text, range) in [
        ("http://[::]/", "unspecified (::)"),
        ("http://[fc00::1]/", "unique-local (fc00::/7)"),
        ("http://[fd12:3456:789a::1]/", "unique-local (fc00::/7)"),
        ("http://[fe80::1]/", "link-local (fe80::/10)"),
        ("http://[ff02::1]/", "multicast (ff00::/8)"),
        ("http://[::ffff:8.8.8.8]/", "IPv4-mapped (::ffff:0:0/96)"),
        ("http://[64:ff9b::808:808]/", "NAT64 (64:ff9b::/96 and 64:ff9b:1::/48)"),
        ("http://[64:ff9b:1::1]/", "NAT64 (64:ff9b::/96 and 64:ff9b:1::/48)"),
        ("http://[100::1]/", "outside global unicast (2000::/3)"),
        ("http://[2001:db8::1]/", "documentation (2001:db8::/32)"),
        ("http://[2001::1]/", "IETF protocol assignments (2001::/23: Teredo, benchmarking, ORCHID)"),
        ("http://[2002:0808:0808::1]/", "6to4 (2002::/16, which embeds an IPv4 address)"),
        ("http://[3fff::1]/", "documentation (3fff::/20)"),
        // Embedded IPv4 in a refused range is named by that range.
        ("http://[::ffff:10.0.0.1]/", "private (10.0.0.0/8)"),
        ("http://[::ffff:169.254.169.254]/", "link-local (169.254.0.0/16, where cloud metadata lives)"),
        ("http://[2002:c0a8:0101::1]/", "private (192.168.0.0/16)"),
        ("http://[64:ff9b::a00:1]/", "private (10.0.0.0/8)"),
    ] {
        assert_eq!(range_of(text), range, "{text}");
    }
}

#[test]
fn schemes_ports_and_user_info() {
    for text in
        ["file:///etc/passwd", "ftp://example.com/", "data:text/html,hi", "javascript:alert(1)", "chrome://settings", "ws://example.com/"]
    {
        assert!(matches!(refusal(text), Refusal::Scheme(_)), "{text}");
    }
    assert_eq!(refusal("http://example.com:8080/"), Refusal::Port(8080));
    assert_eq!(refusal("https://example.com:8443/"), Refusal::Port(8443));
    assert_eq!(refusal("http://93.184.215.14:22/"), Refusal::Port(22));
    assert_eq!(refusal("http://user@example.com/"), Refusal::UserInfo);
    assert_eq!(refusal("http://user:pw@example.com/"), Refusal::UserInfo);
    assert_eq!(refusal("http://:pw@example.com/"), Refusal::UserInfo);
}

#[test]
fn public_addresses_and_names_pass() {
    let none = AllowList::none();
    assert_eq!(
        check_url(&url("https://Example.COM/path?q=1"), &none).unwrap(),
        Destination::Name { name: "example.com".into(), port: 443 }
    );
    assert_eq!(check_url(&url("http://example.com./"), &none).unwrap(), Destination::Name { name: "example.com".into(), port: 80 });
    assert_eq!(check_url(&url("http://8.8.8.8/"), &none).unwrap(), Destination::Address("8.8.8.8:80".parse().unwrap()));
    assert_eq!(
        check_url(&url("https://[2606:4700::1111]/"), &none).unwrap(),
        Destination::Address("[2606:4700::1111]:443".parse().unwrap())
    );
    // Edges just outside refused ranges.
    for ip in [
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.167.255.255",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
    ] {
        assert_eq!(check_address(ip.parse().unwrap()), Ok(()), "{ip}");
    }
}

#[test]
fn resolved_addresses_are_checked_like_literals() {
    let none = AllowList::none();
    let refused = check_resolved("intranet.example", "10.1.2.3:443".parse().unwrap(), &none).unwrap_err();
    assert!(matches!(refused, Refusal::ResolvesTo { range: "private (10.0.0.0/8)", .. }), "{refused:?}");
    // The message a page shows names the range, not the internal address.
    assert_eq!(
        refused.to_string(),
        "intranet.example resolves to an address that is private (10.0.0.0/8); the browser only reaches public addresses"
    );
    assert!(matches!(check_resolved("x.example", "[fd00::5]:443".parse().unwrap(), &none), Err(Refusal::ResolvesTo { .. })));
    assert_eq!(check_resolved("one.example", "1.1.1.1:443".parse().unwrap(), &none), Ok(()));
    assert_eq!(check_resolved("one.example", "1.1.1.1:8080".parse().unwrap(), &none), Err(Refusal::Port(8080)));
}

#[test]
fn tunnels_go_to_443_only() {
    let none = AllowList::none();
    assert_eq!(check_tunnel("example.com:443", &none).unwrap(), Destination::Name { name: "example.com".into(), port: 443 });
    assert_eq!(check_tunnel("example.com:8443", &none), Err(Refusal::Port(8443)));
    assert_eq!(check_tunnel("example.com:80", &none), Err(Refusal::TunnelPort(80)));
    assert!(matches!(check_tunnel("127.0.0.1:443", &none), Err(Refusal::Address { .. })));
    assert!(matches!(check_tunnel("localhost:443", &none), Err(Refusal::LocalName { .. })));
}

/// The allow-list lets exactly its socket addresses through, nothing near them.
#[test]
fn the_allow_list_is_exact() {
    let allow = AllowList::of(["127.0.0.1:4100".parse().unwrap()]);
    assert_eq!(check_url(&url("http://127.0.0.1:4100/x"), &allow).unwrap(), Destination::Address("127.0.0.1:4100".parse().unwrap()));
    assert!(check_url(&url("http://127.0.0.1:4101/"), &allow).is_err());
    assert!(check_url(&url("http://127.0.0.2:4100/"), &allow).is_err());
    assert!(check_url(&url("http://127.0.0.1/"), &allow).is_err());
    assert!(check_url(&url("http://localhost:4100/"), &allow).is_err(), "a local name stays refused");
    assert_eq!(check_resolved("t.test", "127.0.0.1:4100".parse().unwrap(), &allow), Ok(()));
    assert!(check_resolved("t.test", "127.0.0.1:4101".parse().unwrap(), &allow).is_err());
    // An allow-listed port opens no tunnel to that port of any other address.
    let allow = AllowList::of(["127.0.0.1:80".parse().unwrap()]);
    assert!(check_tunnel("public.example:80", &allow).is_ok(), "the name passes on the port");
    assert_eq!(check_tunnel_target("93.184.215.14:80".parse().unwrap(), &allow), Err(Refusal::TunnelPort(80)));
    assert_eq!(check_tunnel_target("127.0.0.1:80".parse().unwrap(), &allow), Ok(()));
    assert_eq!(check_tunnel_target("93.184.215.14:443".parse().unwrap(), &allow), Ok(()));
}

#[test]
fn refusals_say_why_without_the_path() {
    let message = refusal("http://169.254.169.254/latest/meta-data/iam/security-credentials/role").to_string();
    assert_eq!(
        message,
        "169.254.169.254 is link-local (169.254.0.0/16, where cloud metadata lives); the browser only reaches public addresses"
    );
    assert!(!message.contains("security-credentials"));
}
