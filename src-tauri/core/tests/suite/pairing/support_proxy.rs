//! A TCP proxy on loopback that records every byte each way: the "wire" the tests inspect and
//! replay.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// The bytes of one proxied connection, once both directions have closed.
pub struct Recording {
    pub to_host: Vec<u8>,
    pub to_client: Vec<u8>,
}

pub struct RecordingProxy {
    pub addr: SocketAddr,
    recordings: mpsc::UnboundedReceiver<Recording>,
}

impl RecordingProxy {
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, recordings) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let server = TcpStream::connect(target).await.unwrap();
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    let (to_host, to_client) = tokio::join!(copy(client_read, server_write), copy(server_read, client_write));
                    let _ = tx.send(Recording { to_host, to_client });
                });
            }
        });
        Self { addr, recordings }
    }

    /// The next connection's recording, once it has closed both ways.
    pub async fn next_recording(&mut self) -> Recording {
        super::guarded(self.recordings.recv()).await.unwrap()
    }
}

async fn copy(mut from: OwnedReadHalf, mut to: OwnedWriteHalf) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                seen.extend_from_slice(&buf[..n]);
                if to.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown().await;
    seen
}
