//! The browser's egress proxy against real loopback servers and a DNS stub. Every hostile
//! target is refused by the policy (a 403 naming its reason, not a network error), and no
//! connection reaches any target: the oracle is the servers' own count of accepted
//! connections. An allow-listed page is served, through the address that was checked.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use hearth_core::browser::egress::AllowList;
use hearth_core::browser::proxy::{EgressProxy, resolver_at};
use hearth_testkit::dns_stub::DnsStub;
use hearth_testkit::pages::PageServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The proxy, its DNS stub, one allow-listed server (127.0.0.2:P) and the "private" targets a
/// hostile request would reach: 127.0.0.1:P and, when the machine has IPv6 loopback, [::1]:Q.
struct Net {
    proxy: EgressProxy,
    dns: DnsStub,
    allowed: PageServer,
    private: PageServer,
    private_v6: Option<PageServer>,
}

impl Net {
    async fn start() -> Self {
        // One port P free on both 127.0.0.2 and 127.0.0.1: the private target shares the
        // allowed page's port, so only the address tells them apart.
        let (allowed, private) = loop {
            let allowed = PageServer::bind(SocketAddr::from(([127, 0, 0, 2], 0)), HashMap::new()).await.unwrap();
            let port = allowed.address().port();
            if let Ok(private) = PageServer::bind(SocketAddr::from(([127, 0, 0, 1], port)), HashMap::new()).await {
                break (allowed, private);
            }
        };
        let private_v6 = PageServer::bind("[::1]:0".parse().unwrap(), HashMap::new()).await.ok();
        let dns = DnsStub::start().await.unwrap();
        let proxy = EgressProxy::start(AllowList::of([allowed.address()]), resolver_at(dns.address())).await.unwrap();
        Self { proxy, dns, allowed, private, private_v6 }
    }

    fn port(&self) -> u16 {
        self.allowed.address().port()
    }

    /// Sends a request head (request line and headers, no blank line) to the proxy; returns the
    /// status code, whether the proxy itself refused it, and the body.
    async fn ask(&self, head: &str) -> (u16, bool, String) {
        let mut stream = TcpStream::connect(self.proxy.address()).await.unwrap();
        stream.write_all(format!("{head}\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut reply)).await.expect("the proxy answered").unwrap();
        let reply = String::from_utf8_lossy(&reply).into_owned();
        let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
        let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let refused = head.to_ascii_lowercase().contains("x-hearth-egress: refused");
        (status, refused, body.to_owned())
    }

    async fn get(&self, url: &str) -> (u16, bool, String) {
        let host = url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default();
        self.ask(&format!("GET {url} HTTP/1.1\r\nHost: {host}")).await
    }

    /// Connections the private targets accepted, every earlier one counted.
    async fn targets_reached(&self) -> usize {
        let mut reached = self.private.connections_settled().await;
        if let Some(v6) = &self.private_v6 {
            reached += v6.connections_settled().await;
        }
        reached
    }
}

/// At least 40 hostile targets, each refused for its own reason, none reached.
#[tokio::test]
async fn hostile_targets_are_refused_by_policy_and_none_is_reached() {
    let net = Net::start().await;
    let p = net.port();
    net.dns.answer("private.test", &[Ipv4Addr::LOCALHOST]);
    net.dns.answer("metadata.test", &[Ipv4Addr::new(169, 254, 169, 254)]);
    let mut cases: Vec<(String, &str)> = vec![
        // Loopback, in the spellings the URL parser accepts.
        (format!("GET http://127.0.0.1:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://127.1:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://0x7f000001:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://2130706433:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://0177.0.0.1:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://0x7f.1:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://127.0.0.1.:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://[::ffff:127.0.0.1]:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://[::ffff:7f00:1]:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://[64:ff9b::7f00:1]:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://[2002:7f00:1::1]:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        (format!("GET http://0.0.0.0:{p}/ HTTP/1.1"), "\"this network\""),
        (format!("GET http://[::]:{p}/ HTTP/1.1"), "unspecified"),
        // Local names, before any lookup.
        (format!("GET http://localhost:{p}/ HTTP/1.1"), "local name (localhost)"),
        (format!("GET http://localhost.:{p}/ HTTP/1.1"), "local name (localhost)"),
        (format!("GET http://LOCALHOST:{p}/ HTTP/1.1"), "local name (localhost)"),
        (format!("GET http://app.localhost:{p}/ HTTP/1.1"), "local name (localhost)"),
        ("GET http://printer.local/ HTTP/1.1".into(), "local name (local)"),
        ("GET http://db.internal/ HTTP/1.1".into(), "local name (internal)"),
        ("GET http://nas.lan/ HTTP/1.1".into(), "local name (lan)"),
        ("GET http://router.home.arpa/ HTTP/1.1".into(), "local name (home.arpa)"),
        // Private, shared and special ranges.
        ("GET http://10.0.0.1/ HTTP/1.1".into(), "private (10.0.0.0/8)"),
        ("GET http://172.16.0.1/ HTTP/1.1".into(), "private (172.16.0.0/12)"),
        ("GET http://192.168.1.1/ HTTP/1.1".into(), "private (192.168.0.0/16)"),
        ("GET http://169.254.169.254/latest/meta-data/ HTTP/1.1".into(), "link-local (169.254.0.0/16"),
        ("GET http://100.64.0.1/ HTTP/1.1".into(), "carrier-grade NAT"),
        ("GET http://192.0.2.1/ HTTP/1.1".into(), "documentation (192.0.2.0/24)"),
        ("GET http://198.18.0.1/ HTTP/1.1".into(), "benchmarking"),
        ("GET http://224.0.0.1/ HTTP/1.1".into(), "multicast (224.0.0.0/4)"),
        ("GET http://255.255.255.255/ HTTP/1.1".into(), "reserved or broadcast"),
        ("GET http://[fd00::1]/ HTTP/1.1".into(), "unique-local (fc00::/7)"),
        ("GET http://[fe80::1]/ HTTP/1.1".into(), "link-local (fe80::/10)"),
        ("GET http://[2001:db8::1]/ HTTP/1.1".into(), "documentation (2001:db8::/32)"),
        // Schemes, user info, ports.
        ("GET ftp://example.com/ HTTP/1.1".into(), "only loads http and https"),
        ("GET http://example.com:22/ HTTP/1.1".into(), "port 22 is refused"),
        ("GET http://example.com:8080/ HTTP/1.1".into(), "port 8080 is refused"),
        // Names whose DNS answer is not public.
        (format!("GET http://private.test:{p}/ HTTP/1.1"), "loopback (127.0.0.0/8)"),
        ("GET http://metadata.test/ HTTP/1.1".into(), "link-local (169.254.0.0/16"),
        ("GET http://nowhere.test/ HTTP/1.1".into(), "nowhere.test has no address"),
        // Tunnels: :443 only, and to public addresses only.
        (format!("CONNECT 127.0.0.1:{p} HTTP/1.1\r\nHost: 127.0.0.1:{p}"), "loopback (127.0.0.0/8)"),
        ("CONNECT example.com:8443 HTTP/1.1\r\nHost: example.com:8443".into(), "port 8443 is refused"),
        ("CONNECT example.com:80 HTTP/1.1\r\nHost: example.com:80".into(), "tunnel to port 80 is refused"),
        ("CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443".into(), "loopback (::1)"),
        (format!("CONNECT private.test:{p} HTTP/1.1\r\nHost: private.test:{p}"), "loopback (127.0.0.0/8)"),
        ("CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443".into(), "local name (localhost)"),
    ];
    if let Some(v6) = &net.private_v6 {
        let q = v6.address().port();
        cases.push((format!("GET http://[::1]:{q}/ HTTP/1.1"), "loopback (::1)"));
        cases.push((format!("CONNECT [::1]:{q} HTTP/1.1\r\nHost: [::1]:{q}"), "loopback (::1)"));
    }
    assert!(cases.len() >= 40, "{} cases", cases.len());

    let mut wrong = Vec::new();
    for (head, reason) in &cases {
        let head = if head.contains("\r\nHost:") { head.clone() } else { format!("{head}\r\nHost: x") };
        let (status, refused, body) = net.ask(&head).await;
        if status != 403 || !refused || !body.contains(reason) {
            wrong.push(format!("{head:?} → {status} refused={refused} {body:?} (wanted {reason:?})"));
        }
    }
    assert!(wrong.is_empty(), "{} of {} not refused by policy as expected:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
    assert_eq!(net.targets_reached().await, 0, "a hostile request reached a target");
    assert_eq!(net.proxy.refused().len(), cases.len(), "every refusal is kept for the notices");
    // Names were resolved by the proxy, once per request that named one, and local names
    // never reached DNS.
    assert_eq!(net.dns.queries(), ["private.test", "metadata.test", "nowhere.test", "private.test"]);
}

/// The allow-listed page is served through the proxy with the URL's Host header (not the one
/// the client sent), and without the headers `Connection` names as hop-by-hop.
#[tokio::test]
async fn an_allowed_page_is_served_through_the_checked_address() {
    let net = Net::start().await;
    let p = net.port();
    let (status, refused, body) =
        net.ask(&format!("GET http://127.0.0.2:{p}/page?x=1 HTTP/1.1\r\nHost: evil.example\r\nConnection: x-secret\r\nX-Secret: 1")).await;
    assert_eq!((status, refused), (200, false), "{body}");
    assert!(body.contains(&format!("served by 127.0.0.2:{p}")), "{body}");
    assert_eq!(net.allowed.requests(), vec!["/page?x=1".to_owned()]);
    assert_eq!(net.allowed.hosts(), vec![format!("127.0.0.2:{p}")]);
    let names = &net.allowed.header_names()[0];
    assert!(!names.iter().any(|n| n == "x-secret" || n == "connection"), "hop-by-hop headers were forwarded: {names:?}");
    assert_eq!(net.targets_reached().await, 0);

    // A tunnel to the allowed address splices bytes both ways.
    let mut stream = TcpStream::connect(net.proxy.address()).await.unwrap();
    stream.write_all(format!("CONNECT 127.0.0.2:{p} HTTP/1.1\r\nHost: 127.0.0.2:{p}\r\n\r\n").as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let mut rest = Vec::new();
    while !rest.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        stream.read_exact(&mut byte).await.unwrap();
        rest.push(byte[0]);
    }
    stream.write_all(b"GET /tunnelled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut reply)).await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 200"));
    assert_eq!(net.allowed.requests().last().map(String::as_str), Some("/tunnelled"));
}

/// DNS rebinding: the first answer passes and is served; the second would be private and is
/// refused; the pinned connection never went to the private target.
#[tokio::test]
async fn a_rebinding_answer_reaches_nothing() {
    let net = Net::start().await;
    let p = net.port();
    net.dns.answer("rebind.test", &[Ipv4Addr::new(127, 0, 0, 2), Ipv4Addr::LOCALHOST]);
    let first = net.get(&format!("http://rebind.test:{p}/one")).await;
    assert_eq!((first.0, first.1), (200, false), "{first:?}");
    assert_eq!(net.allowed.requests(), vec!["/one".to_owned()]);
    let second = net.get(&format!("http://rebind.test:{p}/two")).await;
    assert_eq!((second.0, second.1), (403, true), "{second:?}");
    assert!(second.2.contains("loopback"), "{second:?}");
    assert_eq!(net.dns.queries().iter().filter(|q| *q == "rebind.test").count(), 2, "each request resolved once");
    assert_eq!(net.targets_reached().await, 0);
}

/// A page that redirects to a private address: the proxy passes the redirect on, and the
/// request that follows it is refused like any other.
#[tokio::test]
async fn a_redirect_to_a_private_address_is_refused_when_followed() {
    let net = Net::start().await;
    let p = net.port();
    let target = format!("http://127.0.0.1:{p}/secret");
    let mut stream = TcpStream::connect(net.proxy.address()).await.unwrap();
    let head = format!("GET http://127.0.0.2:{p}/redirect?to={target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut reply)).await.unwrap().unwrap();
    let reply = String::from_utf8_lossy(&reply).to_ascii_lowercase();
    assert!(reply.starts_with("http/1.1 302"), "{reply}");
    assert!(reply.contains(&format!("location: {target}")), "the redirect's target was not passed on: {reply}");
    let (status, refused, body) = net.get(&target).await;
    assert_eq!((status, refused), (403, true), "{body}");
    assert_eq!(net.targets_reached().await, 0);
}
