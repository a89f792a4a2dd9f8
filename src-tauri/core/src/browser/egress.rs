//! Where the agent's browser may connect: one policy over a URL and the addresses its name
//! resolved to, with the reason for every refusal.
//!
//! The policy is pure (no I/O): the proxy in `browser::proxy` resolves the name, asks
//! [`check_url`] and [`check_address`], and then connects to the address it checked — never
//! to whatever a second resolution would give (DNS rebinding). URLs are parsed by the `url`
//! crate (the WHATWG parser Chromium also follows), so `127.1`, `0x7f000001` and `2130706433`
//! arrive here as the IPv4 address they mean; ranges are `ipnet` networks.
//!
//! What is allowed: `http` and `https`, ports 80 and 443, no user info, a name that is not
//! local by convention (`localhost`, `.local`, `.internal`, `.lan`, `.home.arpa`), and only
//! public unicast addresses. The one way past it is the [`AllowList`] of exact socket
//! addresses, empty by default, for the tests' and a developer's loopback pages.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::LazyLock;

use ipnet::{Ipv4Net, Ipv6Net};
use url::{Host, Url};

/// Why a request may not leave. Each says what was refused and why, without the URL's path
/// or query (which may carry what the page knows about the owner).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not http or https (file, ftp, data, chrome, …).
    #[error("the browser only loads http and https, not {0}:")]
    Scheme(String),
    /// No host at all.
    #[error("the address has no host")]
    NoHost,
    /// A user name or password in the URL.
    #[error("addresses with a user name or password are refused")]
    UserInfo,
    /// A port other than 80 and 443.
    #[error("port {0} is refused: the browser connects to ports 80 and 443 only")]
    Port(u16),
    /// A name that is local by convention.
    #[error("{name} is a local name ({suffix}); the browser only reaches the public internet")]
    LocalName {
        /// The host as written (lowercased by the URL parser).
        name: String,
        /// The suffix that made it local.
        suffix: &'static str,
    },
    /// An address in a range that is not public unicast.
    #[error("{address} is {range}; the browser only reaches public addresses")]
    Address {
        /// The address refused.
        address: IpAddr,
        /// The range it is in, named.
        range: &'static str,
    },
    /// A name whose DNS answer is not public: the address stays out of the message (a page
    /// the agent reads shows it), the range is named.
    #[error("{name} resolves to an address that is {range}; the browser only reaches public addresses")]
    ResolvesTo {
        /// The name.
        name: String,
        /// The refused address (for the log only).
        address: IpAddr,
        /// The range it is in, named.
        range: &'static str,
    },
    /// A host name with an empty label (`a..b`, `x..`).
    #[error("{0} is not a valid host name")]
    BadName(String),
    /// The name resolved to nothing.
    #[error("{0} has no address")]
    NoAddress(String),
    /// CONNECT to anything but :443 (a tunnel is for TLS only).
    #[error("a tunnel to port {0} is refused: the browser tunnels to port 443 only")]
    TunnelPort(u16),
}

/// Exact socket addresses the browser may reach although the policy refuses them (loopback
/// test servers, a developer's local page). Empty unless a test or the developer sets it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    addresses: Vec<SocketAddr>,
}

impl AllowList {
    /// Nothing allowed past the policy: the default.
    pub fn none() -> Self {
        Self::default()
    }

    /// These addresses allowed past it.
    pub fn of(addresses: impl IntoIterator<Item = SocketAddr>) -> Self {
        Self { addresses: addresses.into_iter().collect() }
    }

    /// Whether `address` is on it.
    pub fn allows(&self, address: SocketAddr) -> bool {
        self.addresses.contains(&address)
    }

    fn allows_port(&self, port: u16) -> bool {
        self.addresses.iter().any(|a| a.port() == port)
    }
}

/// Where a URL that passed [`check_url`] points: a name to resolve, or an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A DNS name, lowercased; every address it resolves to goes through [`check_address`].
    Name {
        /// The name.
        name: String,
        /// The port (80 or 443, or an allow-listed one).
        port: u16,
    },
    /// An address literal, already checked.
    Address(SocketAddr),
}

/// Checks everything about `url` that does not need DNS.
pub fn check_url(url: &Url, allow: &AllowList) -> Result<Destination, Refusal> {
    match url.scheme() {
        "http" | "https" => {}
        other => return Err(Refusal::Scheme(other.to_owned())),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refusal::UserInfo);
    }
    let port = url.port_or_known_default().ok_or(Refusal::NoHost)?;
    match url.host().ok_or(Refusal::NoHost)? {
        Host::Domain(name) => check_name(name, port, allow),
        Host::Ipv4(ip) => check_socket(SocketAddr::new(IpAddr::V4(ip), port), allow).map(Destination::Address),
        Host::Ipv6(ip) => check_socket(SocketAddr::new(IpAddr::V6(ip), port), allow).map(Destination::Address),
    }
}

/// Checks a CONNECT request's authority (`host:port`): port 443 only, then as [`check_url`].
pub fn check_tunnel(authority: &str, allow: &AllowList) -> Result<Destination, Refusal> {
    let url = Url::parse(&format!("https://{authority}/")).map_err(|_| Refusal::NoHost)?;
    let port = url.port_or_known_default().ok_or(Refusal::NoHost)?;
    let destination = check_url(&url, allow)?;
    let allowed = match &destination {
        Destination::Address(address) => allow.allows(*address),
        Destination::Name { .. } => allow.allows_port(port),
    };
    if port != 443 && !allowed {
        return Err(Refusal::TunnelPort(port));
    }
    Ok(destination)
}

/// Checks one address `name` resolved to, at its port.
pub fn check_resolved(name: &str, address: SocketAddr, allow: &AllowList) -> Result<(), Refusal> {
    match check_socket(address, allow) {
        Ok(_) => Ok(()),
        Err(Refusal::Address { address, range }) => Err(Refusal::ResolvesTo { name: name.to_owned(), address, range }),
        Err(other) => Err(other),
    }
}

/// Checks the address a tunnel will be spliced to (after [`check_tunnel`] and resolution):
/// port 443, or exactly an allow-listed address — so an allow-listed port never opens a raw
/// tunnel to that port of a public host.
pub fn check_tunnel_target(address: SocketAddr, allow: &AllowList) -> Result<(), Refusal> {
    if address.port() == 443 || allow.allows(address) { Ok(()) } else { Err(Refusal::TunnelPort(address.port())) }
}

fn check_name(name: &str, port: u16, allow: &AllowList) -> Result<Destination, Refusal> {
    // One trailing dot names the same host (`localhost.`); an empty label anywhere else is
    // no host at all (`localhost..` must not slip past the suffix check).
    let bare = name.strip_suffix('.').unwrap_or(name);
    if bare.split('.').any(str::is_empty) {
        return Err(Refusal::BadName(name.to_owned()));
    }
    for suffix in LOCAL_SUFFIXES {
        let under = bare.len() > suffix.len() && bare.ends_with(suffix) && bare.as_bytes()[bare.len() - suffix.len() - 1] == b'.';
        if bare == *suffix || under {
            return Err(Refusal::LocalName { name: name.to_owned(), suffix });
        }
    }
    if port != 80 && port != 443 && !allow.allows_port(port) {
        return Err(Refusal::Port(port));
    }
    Ok(Destination::Name { name: bare.to_owned(), port })
}

fn check_socket(address: SocketAddr, allow: &AllowList) -> Result<SocketAddr, Refusal> {
    if allow.allows(address) {
        return Ok(address);
    }
    check_address(address.ip())?;
    if address.port() != 80 && address.port() != 443 {
        return Err(Refusal::Port(address.port()));
    }
    Ok(address)
}

/// Names that are local by convention, refused before any lookup.
const LOCAL_SUFFIXES: &[&str] = &["localhost", "local", "internal", "lan", "home.arpa"];

/// Whether `address` is public unicast; if not, the range it is in.
pub fn check_address(address: IpAddr) -> Result<(), Refusal> {
    let range = match address {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    };
    match range {
        Some(range) => Err(Refusal::Address { address, range }),
        None => Ok(()),
    }
}

/// IPv4 ranges that are not public unicast (RFC 6890 and its successors).
const REFUSED_V4: &[(&str, &str)] = &[
    ("0.0.0.0/8", "in \"this network\" (0.0.0.0/8)"),
    ("10.0.0.0/8", "private (10.0.0.0/8)"),
    ("100.64.0.0/10", "shared carrier-grade NAT space (100.64.0.0/10)"),
    ("127.0.0.0/8", "loopback (127.0.0.0/8)"),
    ("169.254.0.0/16", "link-local (169.254.0.0/16, where cloud metadata lives)"),
    ("172.16.0.0/12", "private (172.16.0.0/12)"),
    ("192.0.0.0/24", "IETF protocol assignments (192.0.0.0/24)"),
    ("192.0.2.0/24", "documentation (192.0.2.0/24)"),
    ("192.88.99.0/24", "6to4 relay anycast (192.88.99.0/24)"),
    ("192.168.0.0/16", "private (192.168.0.0/16)"),
    ("198.18.0.0/15", "benchmarking (198.18.0.0/15)"),
    ("198.51.100.0/24", "documentation (198.51.100.0/24)"),
    ("203.0.113.0/24", "documentation (203.0.113.0/24)"),
    ("224.0.0.0/4", "multicast (224.0.0.0/4)"),
    ("240.0.0.0/4", "reserved or broadcast (240.0.0.0/4)"),
];

/// IPv6 ranges inside global unicast (2000::/3) that are still refused. Everything outside
/// 2000::/3 is refused first (loopback, unspecified, mapped and compatible IPv4, NAT64,
/// unique-local, link-local, multicast).
const REFUSED_V6_GLOBAL: &[(&str, &str)] = &[
    ("2001::/23", "IETF protocol assignments (2001::/23: Teredo, benchmarking, ORCHID)"),
    ("2001:db8::/32", "documentation (2001:db8::/32)"),
    ("2002::/16", "6to4 (2002::/16, which embeds an IPv4 address)"),
    ("3fff::/20", "documentation (3fff::/20)"),
];

/// The tables above, parsed once.
static V4: LazyLock<Vec<(Ipv4Net, &'static str)>> =
    LazyLock::new(|| REFUSED_V4.iter().filter_map(|(net, name)| Some((net.parse().ok()?, *name))).collect());
static V6: LazyLock<Vec<(Ipv6Net, &'static str)>> =
    LazyLock::new(|| REFUSED_V6_GLOBAL.iter().filter_map(|(net, name)| Some((net.parse().ok()?, *name))).collect());

fn refused_v4(address: Ipv4Addr) -> Option<&'static str> {
    V4.iter().find(|(net, _)| net.contains(&address)).map(|(_, name)| *name)
}

fn refused_v6(address: Ipv6Addr) -> Option<&'static str> {
    if address.is_loopback() {
        return Some("loopback (::1)");
    }
    if address.is_unspecified() {
        return Some("unspecified (::)");
    }
    // IPv4 inside IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96) is
    // named by the IPv4 range it embeds when that is refused, so `[::ffff:127.0.0.1]` reads as
    // loopback, not as "outside 2000::/3".
    if let Some(v4) = embedded_v4(address)
        && let Some(range) = refused_v4(v4)
    {
        return Some(range);
    }
    // 2000::/3: the first three bits 001.
    if address.segments()[0] & 0xe000 != 0x2000 {
        return Some(outside_global_name(address));
    }
    V6.iter().find(|(net, _)| net.contains(&address)).map(|(_, name)| *name)
}

/// The IPv4 address an IPv6 address carries, for the forms that deliver to it.
fn embedded_v4(address: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = address.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated).
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0, 0, _, _] => Some(low),
        // 64:ff9b::/96, the well-known NAT64 prefix.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        // 2002:AABB:CCDD::/48 (6to4) embeds the IPv4 address after the prefix.
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)),
        _ => None,
    }
}

fn outside_global_name(address: Ipv6Addr) -> &'static str {
    let first = address.segments()[0];
    if first & 0xfe00 == 0xfc00 {
        "unique-local (fc00::/7)"
    } else if first & 0xffc0 == 0xfe80 {
        "link-local (fe80::/10)"
    } else if first & 0xff00 == 0xff00 {
        "multicast (ff00::/8)"
    } else if address.segments()[..6] == [0, 0, 0, 0, 0, 0xffff] {
        "IPv4-mapped (::ffff:0:0/96)"
    } else if first == 0x64 && address.segments()[1] == 0xff9b {
        "NAT64 (64:ff9b::/96 and 64:ff9b:1::/48)"
    } else {
        "outside global unicast (2000::/3)"
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Destination::Name { name, port } => write!(f, "{name}:{port}"),
            Destination::Address(address) => write!(f, "{address}"),
        }
    }
}

#[cfg(test)]
#[path = "egress_tests.rs"]
mod tests;
