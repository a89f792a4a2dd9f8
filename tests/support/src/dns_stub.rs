//! A DNS server on loopback (UDP) that answers A queries from a script, for the browser's
//! egress tests: a name whose answer is private, and DNS rebinding (a first answer that passes,
//! a second that would not). Speaks the real wire format (hickory-proto), so the code under
//! test resolves through its real resolver.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use hickory_proto::op::{Message, MessageType, OpCode, ResponseCode};
use hickory_proto::rr::rdata::A;
use hickory_proto::rr::{RData, Record, RecordType};
use tokio::net::UdpSocket;

/// The names it knows: each query for a name takes its next answer (the last one repeats).
#[derive(Default)]
struct Script {
    answers: HashMap<String, (Vec<Ipv4Addr>, usize)>,
    queries: Vec<String>,
}

/// The running stub; it stops when dropped.
pub struct DnsStub {
    address: SocketAddr,
    script: Arc<Mutex<Script>>,
    task: tokio::task::JoinHandle<()>,
}

impl DnsStub {
    /// Starts on a free loopback port.
    pub async fn start() -> std::io::Result<Self> {
        let socket = UdpSocket::bind("127.0.0.1:0").await?;
        let address = socket.local_addr()?;
        let script = Arc::new(Mutex::new(Script::default()));
        let task = tokio::spawn(serve(socket, script.clone()));
        Ok(Self { address, script, task })
    }

    /// Where a resolver sends its queries.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `name`'s answers, one per query in order (the last repeats). A name never given answers
    /// NXDOMAIN.
    pub fn answer(&self, name: &str, answers: &[Ipv4Addr]) {
        if let Ok(mut script) = self.script.lock() {
            script.answers.insert(name.trim_end_matches('.').to_ascii_lowercase(), (answers.to_vec(), 0));
        }
    }

    /// Every name asked for an A record, in order.
    pub fn queries(&self) -> Vec<String> {
        self.script.lock().map(|s| s.queries.clone()).unwrap_or_default()
    }
}

impl Drop for DnsStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(socket: UdpSocket, script: Arc<Mutex<Script>>) {
    let mut buffer = vec![0u8; 4096];
    loop {
        let Ok((length, from)) = socket.recv_from(&mut buffer).await else { continue };
        let Ok(request) = Message::from_vec(&buffer[..length]) else { continue };
        let Some(reply) = answer(&request, &script) else { continue };
        if let Ok(bytes) = reply.to_vec() {
            let _ = socket.send_to(&bytes, from).await;
        }
    }
}

fn answer(request: &Message, script: &Mutex<Script>) -> Option<Message> {
    let query = request.queries().first()?.clone();
    let name = query.name().to_ascii().trim_end_matches('.').to_ascii_lowercase();
    let mut reply = Message::new();
    reply
        .set_id(request.id())
        .set_message_type(MessageType::Response)
        .set_op_code(OpCode::Query)
        .set_recursion_desired(request.recursion_desired())
        .set_recursion_available(true)
        .add_query(query.clone());
    let mut script = script.lock().ok()?;
    if query.query_type() == RecordType::A {
        script.queries.push(name.clone());
    }
    let Some((answers, next)) = script.answers.get_mut(&name) else {
        reply.set_response_code(ResponseCode::NXDomain);
        return Some(reply);
    };
    if query.query_type() == RecordType::A && !answers.is_empty() {
        let ip = answers[(*next).min(answers.len() - 1)];
        *next += 1;
        // TTL 0: nothing may cache it.
        reply.add_answer(Record::from_rdata(query.name().clone(), 0, RData::A(A(ip))));
    }
    Some(reply)
}
