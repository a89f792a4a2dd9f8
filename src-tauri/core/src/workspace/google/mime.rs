//! The RFC 5322 message Gmail is given to send, built with `mail-builder`: exactly the draft the
//! owner reviewed (recipients, subject, text, attachments), the threading headers of a reply, and
//! a Message-ID Hearth makes from the proposal, so an uncertain send can be looked for in Sent
//! (`rfc822msgid:`) instead of being sent twice.
//!
//! Headers are encoded by the crate (RFC 2047 for anything not ASCII, folded) — but it writes
//! a short ASCII text as it is, line breaks and all, so every header value is checked here
//! first: no control characters in the subject or a file name, a content type of RFC 2045
//! tokens, addresses and message ids of their own shape. Nothing from the draft can add a header.

use mail_builder::MessageBuilder;
use mail_builder::headers::message_id::MessageId;

/// At most this many attachments on one message.
pub const MAX_ATTACHMENTS: usize = 10;
/// At most this many bytes of attachments on one message (Gmail's API takes 35 MB of message).
pub const MAX_ATTACHMENT_BYTES: usize = 20 * 1024 * 1024;

/// One attached file.
#[derive(Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Its name as the recipient sees it.
    pub name: String,
    /// Its type (`application/pdf`).
    pub content_type: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attachment")
            .field("name", &self.name)
            .field("content_type", &self.content_type)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// A message to send, as the owner approved it.
#[derive(Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The connected account's address.
    pub from: String,
    /// Recipients.
    pub to: Vec<String>,
    /// Copy.
    pub cc: Vec<String>,
    /// Blind copy (Gmail sends to them and removes the header).
    pub bcc: Vec<String>,
    /// One line.
    pub subject: String,
    /// Plain text.
    pub body: String,
    /// Attached files.
    pub attachments: Vec<Attachment>,
    /// The Message-ID of the message this answers (its `Message-ID` header, without `<>`).
    pub in_reply_to: Option<String>,
    /// The conversation's Message-IDs, oldest first (the answered message's `References`
    /// followed by its own id).
    pub references: Vec<String>,
    /// This message's id ([`message_id_for`]).
    pub message_id: String,
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the text: mail bodies stay out of logs.
        f.debug_struct("Outgoing")
            .field("message_id", &self.message_id)
            .field("recipients", &(self.to.len() + self.cc.len() + self.bcc.len()))
            .field("attachments", &self.attachments)
            .finish_non_exhaustive()
    }
}

/// Why a message cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MimeError {
    /// Over [`MAX_ATTACHMENTS`].
    #[error("{0} attachments; at most 10 can go on one message")]
    TooManyAttachments(usize),
    /// Over [`MAX_ATTACHMENT_BYTES`].
    #[error("the attachments are {0} bytes together; at most 20 MiB can go on one message")]
    AttachmentsTooLarge(usize),
    /// No recipient.
    #[error("the message has no recipient")]
    NoRecipient,
    /// Not an address `mail-builder` can write as one.
    #[error("{0:?} is not an email address")]
    BadAddress(String),
    /// A subject or file name with a line break or another control character.
    #[error("the {0} has a line break or a control character; remove it")]
    ControlCharacter(&'static str),
    /// Not a `type/subtype` of RFC 2045 tokens.
    #[error("{0:?} is not a content type")]
    BadContentType(String),
    /// A Message-ID that would not survive a header.
    #[error("{0:?} is not a message id")]
    BadMessageId(String),
    /// The crate failed to write.
    #[error("the message could not be written: {0}")]
    Write(String),
}

/// The header every message Hearth sends carries, with the same token as its `Message-ID`
/// ([`message_id_for`]): Gmail keeps a sent message's own headers, but is reported to put a
/// Message-ID of its own in place of the sender's, so an uncertain send is recognised in Sent
/// by this mark as well ([`super::gmail::Gmail::find_sent`]).
pub const OPERATION_HEADER: &str = "X-Hearth-Operation";

/// The Message-ID of the message a proposal sends: unique per proposal, and the same however
/// often it is built, so reconciliation can search Sent for it. On the sender's domain, as
/// RFC 5322 §3.6.4 recommends.
pub fn message_id_for(proposal_id: &str, from: &str) -> String {
    let domain = from.rsplit_once('@').map_or("hearth.invalid", |(_, d)| d);
    let local: String = proposal_id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(80).collect();
    format!("hearth-{local}@{domain}")
}

fn check_address(address: &str) -> Result<(), MimeError> {
    let ok = address.len() <= 254
        && address.split_once('@').is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.') && !domain.starts_with('.'))
        && address.chars().all(|c| c.is_ascii_graphic() && !matches!(c, '<' | '>' | ',' | ';' | '"' | '(' | ')' | '[' | ']' | '\\'));
    if ok { Ok(()) } else { Err(MimeError::BadAddress(address.chars().take(100).collect())) }
}

fn check_content_type(value: &str) -> Result<(), MimeError> {
    // RFC 2045 §5.1: token = 1*<any CHAR except SPACE, CTLs, or tspecials>.
    let token = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?=".contains(c));
    let ok = value.len() <= 100 && value.split_once('/').is_some_and(|(kind, sub)| token(kind) && token(sub));
    if ok { Ok(()) } else { Err(MimeError::BadContentType(value.chars().take(100).collect())) }
}

fn check_message_id(id: &str) -> Result<(), MimeError> {
    let ok = id.len() <= 250 && id.contains('@') && id.chars().all(|c| c.is_ascii_graphic() && !matches!(c, '<' | '>' | '"' | '\\'));
    if ok { Ok(()) } else { Err(MimeError::BadMessageId(id.chars().take(100).collect())) }
}

fn address_list(addresses: &[String]) -> mail_builder::headers::address::Address<'_> {
    mail_builder::headers::address::Address::new_list(addresses.iter().map(|a| a.as_str().into()).collect())
}

/// The message's bytes (CRLF line ends), ready for Gmail's `users.messages.send` (`raw`,
/// base64url).
pub fn build(mail: &Outgoing) -> Result<Vec<u8>, MimeError> {
    if mail.attachments.len() > MAX_ATTACHMENTS {
        return Err(MimeError::TooManyAttachments(mail.attachments.len()));
    }
    let total: usize = mail.attachments.iter().map(|a| a.bytes.len()).sum();
    if total > MAX_ATTACHMENT_BYTES {
        return Err(MimeError::AttachmentsTooLarge(total));
    }
    if mail.to.is_empty() && mail.cc.is_empty() && mail.bcc.is_empty() {
        return Err(MimeError::NoRecipient);
    }
    for address in std::iter::once(&mail.from).chain(&mail.to).chain(&mail.cc).chain(&mail.bcc) {
        check_address(address)?;
    }
    for id in std::iter::once(&mail.message_id).chain(mail.in_reply_to.iter()).chain(&mail.references) {
        check_message_id(id)?;
    }
    if mail.subject.chars().any(char::is_control) {
        return Err(MimeError::ControlCharacter("subject"));
    }
    for attachment in &mail.attachments {
        if attachment.name.chars().any(char::is_control) {
            return Err(MimeError::ControlCharacter("file name"));
        }
        check_content_type(&attachment.content_type)?;
    }
    let mut message = MessageBuilder::new()
        .from(mail.from.as_str())
        .subject(mail.subject.as_str())
        .message_id(mail.message_id.as_str())
        .header(OPERATION_HEADER, mail_builder::headers::raw::Raw::new(mail.message_id.as_str()))
        .text_body(mail.body.as_str());
    if !mail.to.is_empty() {
        message = message.to(address_list(&mail.to));
    }
    if !mail.cc.is_empty() {
        message = message.cc(address_list(&mail.cc));
    }
    if !mail.bcc.is_empty() {
        message = message.bcc(address_list(&mail.bcc));
    }
    if let Some(parent) = &mail.in_reply_to {
        message = message.in_reply_to(parent.as_str());
    }
    if !mail.references.is_empty() {
        message = message.references(MessageId::new_list(mail.references.iter().map(String::as_str)));
    }
    for attachment in &mail.attachments {
        message = message.attachment(attachment.content_type.as_str(), attachment.name.as_str(), attachment.bytes.as_slice());
    }
    message.write_to_vec().map_err(|err| MimeError::Write(err.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use mail_parser::{HeaderValue, MessageParser, MimeHeaders};
    use sha2::{Digest, Sha256};

    use super::*;

    fn reply() -> Outgoing {
        Outgoing {
            from: "owner@example.org".into(),
            to: vec!["ana@example.com".into(), "bo@example.net".into()],
            cc: vec!["cy@example.com".into()],
            bcc: vec!["dee@example.com".into()],
            subject: "Re: Zoë's permission form — signed".into(),
            body: "Hello Ana,\n\nThe form is attached.\n\n— Owner".into(),
            attachments: vec![
                Attachment {
                    name: "permission-form (signed).pdf".into(),
                    content_type: "application/pdf".into(),
                    bytes: b"%PDF-1.7\n\x00\x01\xff".to_vec(),
                },
                Attachment { name: "notes.txt".into(), content_type: "text/plain".into(), bytes: "ünïcode\r\n".as_bytes().to_vec() },
            ],
            in_reply_to: Some("CAB1234@mail.gmail.com".into()),
            references: vec!["first@example.com".into(), "CAB1234@mail.gmail.com".into()],
            message_id: message_id_for("0b5a3d2e-9c1f-4e7a", "owner@example.org"),
        }
    }

    fn addresses(value: Option<&mail_parser::Address<'_>>) -> Vec<String> {
        value.map(|a| a.iter().filter_map(|a| a.address.as_deref().map(str::to_owned)).collect()).unwrap_or_default()
    }

    /// What the reviewer approved is what the parser reads back: headers, threading, text and
    /// every attachment byte for byte.
    #[test]
    fn a_built_message_parses_back_to_exactly_the_draft() {
        let mail = reply();
        let raw = build(&mail).unwrap();
        let parsed = MessageParser::default().parse(&raw).unwrap();
        assert_eq!(addresses(parsed.from()), ["owner@example.org"]);
        assert_eq!(addresses(parsed.to()), ["ana@example.com", "bo@example.net"]);
        assert_eq!(addresses(parsed.cc()), ["cy@example.com"]);
        assert_eq!(addresses(parsed.bcc()), ["dee@example.com"]);
        assert_eq!(parsed.subject(), Some(mail.subject.as_str()));
        assert_eq!(parsed.message_id(), Some("hearth-0b5a3d2e-9c1f-4e7a@example.org"));
        // The mark an uncertain send is found by, should Gmail replace the Message-ID.
        assert_eq!(parsed.header_raw(OPERATION_HEADER).map(str::trim), Some("hearth-0b5a3d2e-9c1f-4e7a@example.org"));
        assert_eq!(parsed.in_reply_to().as_text(), Some("CAB1234@mail.gmail.com"));
        match parsed.references() {
            HeaderValue::TextList(ids) => assert_eq!(ids.iter().map(|s| s.as_ref()).collect::<Vec<_>>(), mail.references),
            other => panic!("References: {other:?}"),
        }
        // The text goes with CRLF line ends, as RFC 5322 wants: the same text.
        assert_eq!(parsed.body_text(0).map(|t| t.replace("\r\n", "\n")).as_deref().map(str::trim_end), Some(mail.body.trim_end()));
        let attached: Vec<(String, String)> = parsed
            .attachments()
            .map(|part| (part.attachment_name().unwrap_or_default().to_owned(), hex::encode(Sha256::digest(part.contents()))))
            .collect();
        let expected: Vec<(String, String)> =
            mail.attachments.iter().map(|a| (a.name.clone(), hex::encode(Sha256::digest(&a.bytes)))).collect();
        assert_eq!(attached, expected);
    }

    #[test]
    fn limits_and_shapes_are_refused_with_what_to_change() {
        let mut many = reply();
        many.attachments =
            (0..11).map(|i| Attachment { name: format!("{i}.txt"), content_type: "text/plain".into(), bytes: vec![b'x'] }).collect();
        assert_eq!(build(&many), Err(MimeError::TooManyAttachments(11)));
        let mut large = reply();
        large.attachments = vec![Attachment {
            name: "big.bin".into(),
            content_type: "application/octet-stream".into(),
            bytes: vec![0; MAX_ATTACHMENT_BYTES + 1],
        }];
        assert_eq!(build(&large), Err(MimeError::AttachmentsTooLarge(MAX_ATTACHMENT_BYTES + 1)));
        let nobody = Outgoing { to: vec![], cc: vec![], bcc: vec![], ..reply() };
        assert_eq!(build(&nobody), Err(MimeError::NoRecipient));
        let injected = Outgoing { to: vec!["ana@example.com>\r\nBcc: evil@example.com".into()], ..reply() };
        assert!(matches!(build(&injected), Err(MimeError::BadAddress(_))));
        let bad_id = Outgoing { in_reply_to: Some("x>\r\nBcc: evil".into()), ..reply() };
        assert!(matches!(build(&bad_id), Err(MimeError::BadMessageId(_))));
        assert_eq!(message_id_for("a/b\r\nc", "owner@example.org"), "hearth-abc@example.org");
        // A short ASCII subject is written as it is by the crate: a line break in it is refused
        // here, so it cannot become a header.
        let ascii = Outgoing { subject: "Re: lunch\r\nBcc: evil@example.com".into(), ..reply() };
        assert_eq!(build(&ascii), Err(MimeError::ControlCharacter("subject")));
        let mut named = reply();
        named.attachments[0].name = "a.pdf\r\nContent-Type: text/html".into();
        assert_eq!(build(&named), Err(MimeError::ControlCharacter("file name")));
        let mut typed = reply();
        typed.attachments[0].content_type = "text/plain\r\nContent-Transfer-Encoding: base64".into();
        assert!(matches!(build(&typed), Err(MimeError::BadContentType(_))));
        typed.attachments[0].content_type = "text/plain; charset=utf-8".into();
        assert!(matches!(build(&typed), Err(MimeError::BadContentType(_))));
        // Two proposals, two ids; one proposal, one id however often it is built.
        assert_ne!(message_id_for("p-1", "o@example.org"), message_id_for("p-2", "o@example.org"));
        let id_of = |raw: Vec<u8>| MessageParser::default().parse(&raw).unwrap().message_id().map(str::to_owned);
        assert_eq!(id_of(build(&reply()).unwrap()), id_of(build(&reply()).unwrap()));
    }
}
