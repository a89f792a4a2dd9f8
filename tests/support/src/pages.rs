//! A web server on loopback that counts every connection it accepts — the oracle of the
//! browser's egress tests ("no connection reached this target") — and serves a page, a
//! redirect, a download that never finishes (`/stall.pdf`), and the fixed pages and files
//! tests hand it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// One request as received.
struct Request1 {
    method: String,
    target: String,
    host: String,
    header_names: Vec<String>,
    /// The body as received (at most 1 MiB; empty for a GET).
    body: Vec<u8>,
}

/// A file the server hands out as it is (a download), beside the HTML pages.
#[derive(Debug, Clone)]
pub struct ServedFile {
    /// Its Content-Type.
    pub content_type: &'static str,
    /// `Content-Disposition: attachment; filename=…` when set.
    pub attachment: Option<String>,
    /// Its bytes.
    pub body: Vec<u8>,
}

impl ServedFile {
    /// `body` as `content_type`, shown inline (the browser decides).
    pub fn inline(content_type: &'static str, body: Vec<u8>) -> Self {
        Self { content_type, attachment: None, body }
    }

    /// `body` as `content_type`, sent as an attachment named `name`.
    pub fn attachment(content_type: &'static str, name: &str, body: Vec<u8>) -> Self {
        Self { content_type, attachment: Some(name.to_owned()), body }
    }
}

/// What it saw.
#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    /// Every request, in the order received; one lock, so a request's parts stay together.
    log: Mutex<Vec<Request1>>,
}

/// The running server; it stops when dropped.
pub struct PageServer {
    address: SocketAddr,
    seen: Arc<Seen>,
    /// What it serves; [`PageServer::set_page`] edits it while it runs (a monitored page).
    pages: Arc<std::sync::RwLock<HashMap<String, ServedFile>>>,
    task: tokio::task::JoinHandle<()>,
}

impl PageServer {
    /// Serves `pages` (path → HTML) on `address` (port 0 for a free one). `/redirect?to=URL`
    /// answers 302 to URL; any other path answers a small page naming the server.
    pub async fn bind(address: SocketAddr, pages: HashMap<String, String>) -> std::io::Result<Self> {
        Self::serve(address, html(pages), None).await
    }

    /// [`PageServer::bind`] that also serves `files` (path → file) as they are.
    pub async fn bind_with_files(
        address: SocketAddr,
        pages: HashMap<String, String>,
        files: HashMap<String, ServedFile>,
    ) -> std::io::Result<Self> {
        let mut served = html(pages);
        served.extend(files);
        Self::serve(address, served, None).await
    }

    /// [`PageServer::bind`] over TLS with the certificate chain and key in `cert_pem` and
    /// `key_pem`. Connections are counted when accepted, before the handshake; requests only once
    /// one arrived over TLS.
    pub async fn bind_tls(address: SocketAddr, pages: HashMap<String, String>, cert_pem: &[u8], key_pem: &[u8]) -> std::io::Result<Self> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let invalid = |e: &dyn std::fmt::Display| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string());
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(cert_pem).collect::<Result<_, _>>().map_err(|e| invalid(&e))?;
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| invalid(&e))?;
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(&e))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| invalid(&e))?;
        Self::serve(address, html(pages), Some(tokio_rustls::TlsAcceptor::from(Arc::new(config)))).await
    }

    /// The one accept loop: every connection counted when accepted, then (over TLS when an
    /// acceptor is given) served.
    async fn serve(
        address: SocketAddr,
        pages: HashMap<String, ServedFile>,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(address).await?;
        let address = listener.local_addr()?;
        let seen = Arc::new(Seen::default());
        let pages = Arc::new(std::sync::RwLock::new(pages));
        let served = pages.clone();
        let task = tokio::spawn({
            let seen = seen.clone();
            async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else { continue };
                    seen.connections.fetch_add(1, Ordering::SeqCst);
                    let (seen, pages, tls) = (seen.clone(), pages.clone(), tls.clone());
                    tokio::spawn(async move {
                        let service = service_fn(move |request| respond(request, seen.clone(), pages.clone(), address));
                        let http = hyper::server::conn::http1::Builder::new();
                        match tls {
                            None => drop(http.serve_connection(TokioIo::new(stream), service).await),
                            Some(tls) => {
                                if let Ok(stream) = tls.accept(stream).await {
                                    drop(http.serve_connection(TokioIo::new(stream), service).await);
                                }
                            }
                        }
                    });
                }
            }
        });
        Ok(Self { address, seen, pages: served, task })
    }

    /// How many connections it accepted, counted once every earlier one has been: it asks
    /// `/probe` itself over a connection of its own and waits (up to 20 s) for the answer — the
    /// accept loop takes connections in order, so by then all earlier ones are counted — and
    /// leaves that one out. (Plain HTTP servers only; `/probe` joins [`PageServer::requests`].)
    pub async fn connections_settled(&self) -> usize {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let probe = async {
            let mut stream = tokio::net::TcpStream::connect(self.address).await?;
            stream.write_all(b"GET /probe HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n").await?;
            stream.read_to_end(&mut Vec::new()).await
        };
        let answered = tokio::time::timeout(std::time::Duration::from_secs(20), probe).await;
        assert!(matches!(answered, Ok(Ok(_))), "the page server did not answer its own probe");
        self.connections() - 1
    }

    /// Serves `html` at `path` from the next request on (a page the test edits).
    pub fn set_page(&self, path: &str, html: &str) {
        if let Ok(mut pages) = self.pages.write() {
            pages.insert(path.to_owned(), ServedFile::inline(HTML, html.as_bytes().to_vec()));
        }
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// How many TCP connections it accepted.
    pub fn connections(&self) -> usize {
        self.seen.connections.load(Ordering::SeqCst)
    }

    /// Each request's path and query, in order.
    pub fn requests(&self) -> Vec<String> {
        self.log(|r| r.target.clone())
    }

    /// Each request that was not a GET or HEAD: (method, path and query, body), in order — a
    /// form's submission as the site received it.
    pub fn submissions(&self) -> Vec<(String, String, String)> {
        self.seen
            .log
            .lock()
            .map(|log| {
                log.iter()
                    .filter(|r| r.method != "GET" && r.method != "HEAD")
                    .map(|r| (r.method.clone(), r.target.clone(), String::from_utf8_lossy(&r.body).into_owned()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Each request's header names (lowercase), in order.
    pub fn header_names(&self) -> Vec<Vec<String>> {
        self.log(|r| r.header_names.clone())
    }

    /// Each request's Host header, in order.
    pub fn hosts(&self) -> Vec<String> {
        self.log(|r| r.host.clone())
    }

    /// Each request's target, and whether it carried the header `name`.
    pub fn requests_with_header(&self, name: &str) -> Vec<(String, bool)> {
        self.log(|r| (r.target.clone(), r.header_names.iter().any(|n| n == name)))
    }

    fn log<T>(&self, part: impl Fn(&Request1) -> T) -> Vec<T> {
        self.seen.log.lock().map(|log| log.iter().map(part).collect()).unwrap_or_default()
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn respond(
    request: Request<hyper::body::Incoming>,
    seen: Arc<Seen>,
    pages: Arc<std::sync::RwLock<HashMap<String, ServedFile>>>,
    address: SocketAddr,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    let target = request.uri().path_and_query().map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    let host = request.headers().get(hyper::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default().to_owned();
    let header_names = request.headers().keys().map(|k| k.as_str().to_owned()).collect();
    let method = request.method().as_str().to_owned();
    let uri = request.uri().clone();
    let body =
        http_body_util::Limited::new(request.into_body(), 1 << 20).collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
    if let Ok(mut log) = seen.log.lock() {
        log.push(Request1 { method, target, host, header_names, body });
    }
    let path = uri.path();
    if path == "/hang" {
        // A subresource that never comes (within any test): the page waits on it.
        tokio::time::sleep(std::time::Duration::from_secs(300)).await;
    }
    if path == "/redirect" {
        let to = uri.query().and_then(|q| q.strip_prefix("to=")).unwrap_or("/").to_owned();
        let mut response = Response::new(Full::new(Bytes::new()).boxed());
        *response.status_mut() = StatusCode::FOUND;
        if let Ok(location) = hyper::header::HeaderValue::from_str(&to) {
            response.headers_mut().insert(hyper::header::LOCATION, location);
        }
        return Ok(response);
    }
    if path == "/stall.pdf" {
        // A PDF download that starts and never finishes: its first 64 KiB, then nothing.
        let mut start = b"%PDF-1.7\n".to_vec();
        start.resize(64 * 1024, b' ');
        let first = futures_util::stream::once(async move { Ok::<_, Infallible>(hyper::body::Frame::data(Bytes::from(start))) });
        let body = StreamBody::new(futures_util::StreamExt::chain(first, futures_util::stream::pending()));
        let mut response = Response::new(BodyExt::boxed(body));
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/pdf"));
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_DISPOSITION, hyper::header::HeaderValue::from_static("attachment; filename=\"stall.pdf\""));
        return Ok(response);
    }
    let found = pages.read().ok().and_then(|pages| pages.get(path).cloned());
    let served = found.unwrap_or_else(|| {
        ServedFile::inline(HTML, format!("<!doctype html><title>{address}</title><p>served by {address}</p>").into_bytes())
    });
    let mut response = Response::new(Full::new(Bytes::from(served.body)).boxed());
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(served.content_type));
    if let Some(name) = served.attachment
        && let Ok(value) = hyper::header::HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
    {
        response.headers_mut().insert(hyper::header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

const HTML: &str = "text/html; charset=utf-8";

fn html(pages: HashMap<String, String>) -> HashMap<String, ServedFile> {
    pages.into_iter().map(|(path, body)| (path, ServedFile::inline(HTML, body.into_bytes()))).collect()
}
