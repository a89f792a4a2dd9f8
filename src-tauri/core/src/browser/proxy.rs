//! The browser's one way out: an HTTP proxy on loopback that Chromium is pointed at, which
//! asks the [`egress`](super::egress) policy about every request and connects to the address
//! it checked.
//!
//! Chromium sends a plain-HTTP request here in absolute form (`GET http://host/path`) and
//! opens everything else (https, wss) with `CONNECT host:443`. For each, the proxy:
//!
//! 1. checks the URL or the tunnel's authority ([`egress::check_url`], [`egress::check_tunnel`]);
//! 2. resolves a name itself (Chromium's resolver is unused: its host-resolver rules map every
//!    name to nothing) and checks **every** answer, refusing the request if any is refused;
//! 3. connects to the first checked address — **pinned**: the name is never resolved again
//!    for this request, so a DNS answer that changes after the check (rebinding) reaches
//!    nothing — and forwards the request with its Host header, or splices the tunnel.
//!
//! A refusal is answered with 403 and its reason (Chromium shows an error page; a subresource
//! fails), logged with the host and the reason only, and kept for the browser's notices. A
//! redirect is Chromium's to follow, so its target comes back here and is checked like any
//! request.
//!
//! Hand-written on hyper rather than a proxy crate: the forwarding is ~60 lines, and the one
//! property that matters — connect to the address that was checked, never to a name — is the
//! part no general proxy crate exposes.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use hickory_resolver::TokioResolver;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{HOST, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::egress::{self, AllowList, Destination, Refusal};

/// How long connecting to a checked address may take.
const CONNECT_LIMIT: Duration = Duration::from_secs(10);
/// How long a client (Chromium) may take to send a request's headers.
const HEADER_LIMIT: Duration = Duration::from_secs(10);
/// How long a destination may take to answer a forwarded request's head.
const ANSWER_LIMIT: Duration = Duration::from_secs(60);
/// How long one tunnel (a TLS connection, a websocket) may stay open.
const TUNNEL_LIFETIME: Duration = Duration::from_secs(60 * 60);
/// Connections served at once; Chromium opens at most a few dozen.
const MAX_CONNECTIONS: usize = 256;
/// Refusals kept for the browser's notices (the newest).
const KEPT_REFUSALS: usize = 100;

/// Headers that belong to one hop and are not forwarded (RFC 9110 §7.6.1), plus the proxy's own.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

type Body = BoxBody<Bytes, hyper::Error>;

/// One refused request: the host it named and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The host (no path or query).
    pub host: String,
    /// Why.
    pub refusal: Refusal,
}

/// What every connection shares.
struct Shared {
    allow: AllowList,
    resolver: TokioResolver,
    /// The newest refusals, each with its sequence number (the count of refusals before it).
    refused: Mutex<(u64, VecDeque<(u64, Refused)>)>,
    /// Connections and tunnels open at once (a tunnel outlives its client connection's task).
    slots: Arc<Semaphore>,
    /// Ends every connection, tunnel and forwarded exchange when the proxy is dropped.
    stop: CancellationToken,
}

/// The running proxy; it stops when dropped.
pub struct EgressProxy {
    address: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl EgressProxy {
    /// Starts the proxy on a free loopback port, with `allow` past the policy and names
    /// resolved by `resolver`.
    pub async fn start(allow: AllowList, resolver: TokioResolver) -> std::io::Result<Self> {
        let listener = TcpListener::bind((IpAddr::from([127, 0, 0, 1]), 0)).await?;
        let address = listener.local_addr()?;
        let stop = CancellationToken::new();
        let shared = Arc::new(Shared {
            allow,
            resolver,
            refused: Mutex::new((0, VecDeque::new())),
            slots: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            stop: stop.clone(),
        });
        tokio::spawn(serve(listener, shared.clone(), stop.clone()));
        Ok(Self { address, shared, stop })
    }

    /// Where Chromium's `--proxy-server` points.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The refusals so far, oldest first (at most the last 100).
    pub fn refused(&self) -> Vec<Refused> {
        self.refused_since(0)
    }

    /// How many requests were refused so far: a mark for [`EgressProxy::refused_since`].
    pub fn refusal_mark(&self) -> u64 {
        self.shared.refused.lock().map(|r| r.0).unwrap_or(0)
    }

    /// The refusals kept since `mark` (a [`EgressProxy::refusal_mark`]), oldest first.
    pub fn refused_since(&self, mark: u64) -> Vec<Refused> {
        self.shared
            .refused
            .lock()
            .map(|r| r.1.iter().filter(|(seq, _)| *seq >= mark).map(|(_, refused)| refused.clone()).collect())
            .unwrap_or_default()
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A resolver that reads the system's configuration (`/etc/resolv.conf`), caching nothing:
/// every request's name is checked on its own answers.
pub fn system_resolver() -> Result<TokioResolver, hickory_resolver::ResolveError> {
    let mut builder = TokioResolver::builder_tokio()?;
    builder.options_mut().cache_size = 0;
    Ok(builder.build())
}

/// A resolver with no name server: every name fails to resolve (when the system's DNS
/// settings cannot be read).
pub fn offline_resolver() -> TokioResolver {
    use hickory_resolver::config::ResolverConfig;
    use hickory_resolver::name_server::TokioConnectionProvider;
    TokioResolver::builder_with_config(ResolverConfig::new(), TokioConnectionProvider::default()).build()
}

/// A resolver that asks only `name_server` (UDP), caching nothing: a configured DNS server, or
/// the tests' stub.
pub fn resolver_at(name_server: SocketAddr) -> TokioResolver {
    use hickory_resolver::config::{NameServerConfig, ResolverConfig};
    use hickory_resolver::name_server::TokioConnectionProvider;
    let mut config = ResolverConfig::new();
    config.add_name_server(NameServerConfig::new(name_server, hickory_resolver::proto::xfer::Protocol::Udp));
    let mut builder = TokioResolver::builder_with_config(config, TokioConnectionProvider::default());
    builder.options_mut().cache_size = 0;
    builder.build()
}

async fn serve(listener: TcpListener, shared: Arc<Shared>, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else {
            // Out of descriptors, most likely: wait a little instead of spinning.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Ok(slot) = shared.slots.clone().try_acquire_owned() else {
            // Over the cap: the connection is closed unanswered.
            continue;
        };
        // Without it, an answer's head and body in two writes can wait out Nagle's algorithm
        // against Chromium's delayed ACK: tens of milliseconds on every page.
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let service = service_fn(move |request| handle(shared.clone(), request));
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_LIMIT)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::select! {
                () = stop.cancelled() => {}
                _ = connection => {}
            }
        });
    }
}

async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let answer = if request.method() == Method::CONNECT { tunnel(&shared, request).await } else { forward(&shared, request).await };
    Ok(answer.unwrap_or_else(|failure| failure.into_response(&shared)))
}

/// The header the proxy's own answers carry ([`EGRESS_REFUSED`], [`EGRESS_UNREACHABLE`],
/// [`EGRESS_NOT_SERVED`]), so
/// the browser can tell them from a site's (a reviewed form's send reads it). A site's own header
/// of that name is removed from what the proxy forwards; through a tunnel it cannot be, so what
/// the proxy refused is read from its own record, never from this header.
pub const EGRESS_HEADER: &str = "x-hearth-egress";
/// [`EGRESS_HEADER`]'s value on a refusal.
pub const EGRESS_REFUSED: &str = "refused";
/// [`EGRESS_HEADER`]'s value when the checked destination did not answer.
pub const EGRESS_UNREACHABLE: &str = "unreachable";
/// [`EGRESS_HEADER`]'s value on a request a proxy does not serve (nothing was checked or sent).
pub const EGRESS_NOT_SERVED: &str = "not-served";

/// How the page the proxy shows for a destination that did not answer begins, so a reader of
/// the page's text (a monitor) can tell the proxy's words from the site's.
pub const UNREACHABLE_PAGE: &str = "Hearth could not reach this page: ";

/// Why a request got no answer from its destination.
enum Failure {
    /// The policy refused it.
    Refused { host: String, refusal: Refusal },
    /// Not a request a proxy serves (origin form, https in absolute form, no authority).
    BadRequest(&'static str),
    /// The checked address did not answer.
    Unreachable(String),
}

impl Failure {
    fn into_response(self, shared: &Shared) -> Response<Body> {
        let (status, own, text) = match self {
            Failure::Refused { host, refusal } => {
                let address = match &refusal {
                    Refusal::ResolvesTo { address, .. } | Refusal::Address { address, .. } => Some(address.to_string()),
                    _ => None,
                };
                tracing::info!(target: "hearth::egress", host = %host, address = ?address, reason = %refusal, "refused a request from the browser");
                let text = refusal.to_string();
                if let Ok(mut kept) = shared.refused.lock() {
                    let seq = kept.0;
                    kept.0 += 1;
                    if kept.1.len() == KEPT_REFUSALS {
                        kept.1.pop_front();
                    }
                    kept.1.push_back((seq, Refused { host, refusal }));
                }
                (StatusCode::FORBIDDEN, EGRESS_REFUSED, text)
            }
            Failure::BadRequest(why) => (StatusCode::BAD_REQUEST, EGRESS_NOT_SERVED, why.to_owned()),
            Failure::Unreachable(why) => (StatusCode::BAD_GATEWAY, EGRESS_UNREACHABLE, format!("{UNREACHABLE_PAGE}{why}")),
        };
        // Every answer the proxy writes itself says so.
        let mut response = Response::new(full(text));
        *response.status_mut() = status;
        response.headers_mut().insert(EGRESS_HEADER, HeaderValue::from_static(own));
        response
    }
}

/// `CONNECT host:port`: checked, resolved and pinned, then spliced once Chromium has the 200.
async fn tunnel(shared: &Arc<Shared>, request: Request<Incoming>) -> Result<Response<Body>, Failure> {
    let authority = request.uri().authority().map(|a| a.as_str().to_owned()).ok_or(Failure::BadRequest("CONNECT needs host:port"))?;
    // The host alone names it in notices and logs (an authority may carry user info).
    let host = request.uri().host().unwrap_or_default().to_owned();
    let refused = |refusal| Failure::Refused { host: host.clone(), refusal };
    let destination = egress::check_tunnel(&authority, &shared.allow).map_err(refused)?;
    let pinned = pin(shared, &destination).await.map_err(refused)?;
    egress::check_tunnel_target(pinned, &shared.allow).map_err(refused)?;
    let slot = shared.slots.clone().try_acquire_owned().map_err(|_| Failure::Unreachable("too many connections are open".into()))?;
    let upstream = connect(pinned).await?;
    let stop = shared.stop.clone();
    tokio::spawn(async move {
        let _slot = slot;
        let splice = async {
            match hyper::upgrade::on(request).await {
                Ok(upgraded) => {
                    let mut upstream = upstream;
                    let _ = tokio::io::copy_bidirectional(&mut TokioIo::new(upgraded), &mut upstream).await;
                }
                Err(err) => tracing::debug!(target: "hearth::egress", error = %err, "a tunnel was not upgraded"),
            }
        };
        tokio::select! {
            () = stop.cancelled() => {}
            () = tokio::time::sleep(TUNNEL_LIFETIME) => {}
            () = splice => {}
        }
    });
    Ok(Response::new(empty()))
}

/// `GET http://host/path` (any method): checked, resolved and pinned, then sent in origin form
/// with its Host header over a new connection to the pinned address.
async fn forward(shared: &Shared, request: Request<Incoming>) -> Result<Response<Body>, Failure> {
    let url = Url::parse(&request.uri().to_string()).map_err(|_| Failure::BadRequest("a proxy request names an absolute http:// URL"))?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let destination = egress::check_url(&url, &shared.allow).map_err(|refusal| Failure::Refused { host: host.clone(), refusal })?;
    if url.scheme() != "http" {
        return Err(Failure::BadRequest("https goes through CONNECT"));
    }
    // Hearth's own sample page: answered here, from memory; nothing is resolved or connected.
    if host == super::sample_page::SAMPLE_HOST {
        let mut response = Response::new(full(super::sample_page::page(crate::store::now_ms())));
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        return Ok(response);
    }
    let pinned = pin(shared, &destination).await.map_err(|refusal| Failure::Refused { host: host.clone(), refusal })?;
    let upstream = connect(pinned).await?;
    let (mut sender, connection) = tokio::time::timeout(ANSWER_LIMIT, hyper::client::conn::http1::handshake(TokioIo::new(upstream)))
        .await
        .map_err(|_| Failure::Unreachable(format!("{host} did not answer within {} s", ANSWER_LIMIT.as_secs())))?
        .map_err(|err| Failure::Unreachable(format!("{host} did not speak HTTP: {err}")))?;
    let stop = shared.stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = stop.cancelled() => {}
            _ = connection => {}
        }
    });

    let (mut parts, body) = request.into_parts();
    let origin_form = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    parts.uri = origin_form.parse().map_err(|_| Failure::BadRequest("the URL's path is not valid"))?;
    strip_hop_by_hop(&mut parts.headers);
    let host_header = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.clone(),
    };
    parts.headers.insert(HOST, HeaderValue::from_str(&host_header).map_err(|_| Failure::BadRequest("the host is not a valid header"))?);
    let answer = tokio::time::timeout(ANSWER_LIMIT, sender.send_request(Request::from_parts(parts, body)))
        .await
        .map_err(|_| Failure::Unreachable(format!("{host} did not answer within {} s", ANSWER_LIMIT.as_secs())))?
        .map_err(|err| Failure::Unreachable(format!("{host} did not answer: {err}")))?;
    let (mut parts, body) = answer.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    // Only the proxy speaks with this header.
    parts.headers.remove(EGRESS_HEADER);
    Ok(Response::from_parts(parts, body.boxed()))
}

/// Removes the hop-by-hop headers, and the headers the `Connection` header names as such.
fn strip_hop_by_hop(headers: &mut hyper::HeaderMap) {
    let named: Vec<String> = headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).collect::<Vec<_>>())
        .collect();
    for name in named.iter().map(String::as_str).chain(HOP_BY_HOP.iter().copied()) {
        headers.remove(name);
    }
}

/// The address to connect to: a literal as checked, or a name resolved here with every
/// answer checked. Resolution failures are refusals too (nothing was reached).
async fn pin(shared: &Shared, destination: &Destination) -> Result<SocketAddr, Refusal> {
    let (name, port) = match destination {
        Destination::Address(address) => return Ok(*address),
        Destination::Name { name, port } => (name, *port),
    };
    // Fully qualified: no search domain is appended.
    let answers = shared.resolver.lookup_ip(format!("{name}.")).await.map_err(|_| Refusal::NoAddress(name.clone()))?;
    let addresses: Vec<SocketAddr> = answers.iter().map(|ip| SocketAddr::new(ip, port)).collect();
    for address in &addresses {
        egress::check_resolved(name, *address, &shared.allow)?;
    }
    addresses.first().copied().ok_or_else(|| Refusal::NoAddress(name.clone()))
}

async fn connect(address: SocketAddr) -> Result<TcpStream, Failure> {
    match tokio::time::timeout(CONNECT_LIMIT, TcpStream::connect(address)).await {
        Ok(Ok(stream)) => {
            // The request's head and body go in separate writes too (see the accept loop).
            let _ = stream.set_nodelay(true);
            Ok(stream)
        }
        Ok(Err(err)) => Err(Failure::Unreachable(format!("{address} refused the connection: {err}"))),
        Err(_) => Err(Failure::Unreachable(format!("{address} did not answer within {} s", CONNECT_LIMIT.as_secs()))),
    }
}

fn full(text: String) -> Body {
    Full::new(Bytes::from(text)).map_err(|never| match never {}).boxed()
}

fn empty() -> Body {
    Empty::<Bytes>::new().map_err(|never| match never {}).boxed()
}
