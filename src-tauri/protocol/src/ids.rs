//! Identifiers and time on the wire.
//!
//! Ids are strings on the wire (AG-UI uses strings); Hearth's own are UUIDv4 text, task ids
//! are sha256 hex. Timestamps (`*_at`) are integer Unix milliseconds everywhere.
//!
//! Hearth's own ids travel as newtypes ([`ThreadId`], [`TaskId`], [`RunId`], [`ProposalId`],
//! [`ScheduleId`], [`FileId`], [`OperationId`]) that check themselves when they are
//! deserialized: a request that names a thread with `../etc` or `<script>` is refused while
//! it is parsed, before any `validate()` or the core sees it, and a task id cannot be passed
//! where a proposal id is wanted. On the wire each is a plain JSON string, so the window, the
//! tests and stored JSON read and write exactly what they did before.
//!
//! AG-UI's own ids (`agui`) stay free strings, as that spec has them.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::IpcError;

/// Longest id Hearth accepts from outside (a sha256 hex is 64; UUIDs are 36).
pub const MAX_ID_LEN: usize = 128;

/// Checks an id that arrived from outside the process: non-empty, bounded, and made of
/// `[A-Za-z0-9_.:-]` so it can never smuggle markup or paths.
pub fn is_valid_id(id: &str) -> bool {
    id_fault(id).is_none()
}

/// What is wrong with `id`, if anything (so the error can say it).
fn id_fault(id: &str) -> Option<IdFault> {
    if id.is_empty() {
        Some(IdFault::Empty)
    } else if id.len() > MAX_ID_LEN {
        Some(IdFault::TooLong(id.len()))
    } else if !id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':')) {
        Some(IdFault::BadCharacter)
    } else {
        None
    }
}

/// [`is_valid_id`] as the error a request's `validate()` returns, naming the field. Kept for
/// the ids that are not one of the typed kinds (mail threads, accounts' attempts).
pub(crate) fn validate_id(field: &str, id: &str) -> Result<(), IpcError> {
    if is_valid_id(id) {
        Ok(())
    } else {
        Err(IpcError::invalid(format!("{field} is not a valid id (1–128 characters of letters, digits, '-', '_', '.', ':').")))
    }
}

/// Why a string is not an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdFault {
    Empty,
    TooLong(usize),
    BadCharacter,
}

/// A string that is not a valid id of its kind. The message names the kind and what is
/// wrong, never the string itself (it came from outside and may be long or hostile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdError {
    /// Which kind of id was expected ("task id").
    kind: &'static str,
    fault: IdFault,
}

impl IdError {
    /// Which kind of id was expected ("task id").
    pub const fn kind(&self) -> &'static str {
        self.kind
    }
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a valid {}: ", self.kind)?;
        match self.fault {
            IdFault::Empty => f.write_str("it is empty")?,
            IdFault::TooLong(len) => write!(f, "it is {len} bytes long")?,
            IdFault::BadCharacter => f.write_str("it has a character that is not allowed")?,
        }
        write!(f, "; an id is 1–{MAX_ID_LEN} letters, digits, '-', '_', '.' or ':'")
    }
}

impl std::error::Error for IdError {}

impl From<IdError> for IpcError {
    fn from(err: IdError) -> Self {
        IpcError::invalid(err.to_string())
    }
}

/// Defines one id newtype. A macro rather than a generic `Id<Kind>` so each type has a plain
/// name in errors, docs and the UI's signatures, and so none can be turned into another.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        ///
        /// Checked when deserialized or [`parse`d](Self::parse): 1–128 characters of
        /// `[A-Za-z0-9_.:-]`. A plain string on the wire.
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The kind, as errors name it.
            pub const KIND: &'static str = $kind;

            /// Checks an id that came from outside the process (the window, a tool's
            /// arguments, a URL).
            pub fn parse(id: impl Into<String>) -> Result<Self, IdError> {
                let id = id.into();
                match id_fault(&id) {
                    None => Ok(Self(id)),
                    Some(fault) => Err(IdError { kind: $kind, fault }),
                }
            }

            /// An id this process vouches for: one it minted itself (UUIDv4 text, sha256
            /// hex, the window's per-click operation ids) or read back from Hearth's own
            /// store. No check is needed there: Hearth mints only valid ids, and its store
            /// holds only ids that were minted or passed [`Self::parse`] on the way in, so
            /// re-checking every row would cost each list a pass over its ids and could only
            /// turn a corrupt database into a different error. Debug builds still assert it,
            /// so code that mints a bad id fails its tests at once. Never use it for anything
            /// that arrived from outside the process (the window's requests, a tool's
            /// arguments, an AG-UI client, argv): that is [`Self::parse`].
            pub fn trusted(id: impl Into<String>) -> Self {
                let id = id.into();
                debug_assert!(is_valid_id(&id), "Hearth made or stored an invalid {}: {id:?}", $kind);
                Self(id)
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id's text, without copying.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;

            fn try_from(id: String) -> Result<Self, IdError> {
                Self::parse(id)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = IdError;

            fn try_from(id: &str) -> Result<Self, IdError> {
                Self::parse(id)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        /// Hash and order are the string's, so a map keyed by the id can be looked up by `&str`.
        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        /// Reads as the `&str` it is, so code that only reads an id (SQL binds, formatting,
        /// comparisons) needs no change.
        impl Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let id = String::deserialize(deserializer)?;
                Self::parse(id).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(
    /// A chat thread (conversation) of Hearth's: UUIDv4 text.
    ThreadId,
    "thread id"
);
id_type!(
    /// A durable task: sha256 hex of its idempotency key.
    TaskId,
    "task id"
);
id_type!(
    /// A run: one chat turn, or one lease of a task.
    RunId,
    "run id"
);
id_type!(
    /// A proposal awaiting (or past) the owner's approval.
    ProposalId,
    "proposal id"
);
id_type!(
    /// A schedule.
    ScheduleId,
    "schedule id"
);
id_type!(
    /// A file in Files.
    FileId,
    "file id"
);
id_type!(
    /// A paired device: the hex of the first 16 bytes of the SHA-256 of its public key.
    DeviceId,
    "device id"
);
id_type!(
    /// An operation id a caller gives (the window, once per press): with its scope it forms the
    /// journal's operation key (`op:<id>` within the scope), so the same request sent again
    /// finds the first one's receipt instead of acting twice.
    OperationId,
    "operation id"
);

/// The Crockford base32 alphabet: no I, L, O or U, so a failure id read over the phone is not
/// mistaken for a 1, a 0 or a rude word.
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A failure's short id: 8 characters of Crockford base32 (40 bits), short enough to read out
/// to someone helping. Every failed run carries one, shown with its message; it opens the
/// run's timeline in Activity.
///
/// Made from 40 bits: for a failed run, bits the core derives from the run (a hash of its id),
/// so the same run always has the same failure id; for a failed effect, random bits the store
/// draws in the statement that records the failure (and keeps). Parsing is forgiving the way Crockford intends for ids people
/// type: lower case is upper case, `I`/`L` are `1`, `O` is `0`, and hyphens and spaces are
/// ignored ("abcd-efgh" is "ABCDEFGH").
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FailureId(String);

/// How many characters a [`FailureId`] has.
pub const FAILURE_ID_LEN: usize = 8;

impl FailureId {
    /// The kind, as errors name it.
    pub const KIND: &'static str = "failure id";

    /// The id of the low 40 bits of `bits`.
    pub fn from_bits(bits: u64) -> Self {
        let text = (0..FAILURE_ID_LEN)
            .map(|i| {
                let shift = 5 * (FAILURE_ID_LEN - 1 - i);
                char::from(CROCKFORD[((bits >> shift) & 0x1f) as usize])
            })
            .collect();
        Self(text)
    }

    /// Reads an id the owner typed or pasted (see the type's doc for what is forgiven).
    pub fn parse(text: &str) -> Result<Self, IdError> {
        let fault = |fault| IdError { kind: Self::KIND, fault };
        if text.len() > MAX_ID_LEN {
            return Err(fault(IdFault::TooLong(text.len())));
        }
        let mut id = String::with_capacity(FAILURE_ID_LEN);
        for c in text.chars().filter(|c| !matches!(c, '-' | ' ')) {
            let c = match c.to_ascii_uppercase() {
                'I' | 'L' => '1',
                'O' => '0',
                c => c,
            };
            if !c.is_ascii() || !CROCKFORD.contains(&(c as u8)) {
                return Err(fault(IdFault::BadCharacter));
            }
            id.push(c);
        }
        match id.len() {
            0 => Err(fault(IdFault::Empty)),
            FAILURE_ID_LEN => Ok(Self(id)),
            other => Err(fault(IdFault::TooLong(other))),
        }
    }

    /// The id as text (8 characters, upper case).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 40 bits the id writes ([`Self::from_bits`] of them gives the id back).
    pub fn bits(&self) -> u64 {
        self.0.bytes().fold(0u64, |acc, c| {
            // Only CROCKFORD's characters get in (both constructors make or check them).
            let digit = CROCKFORD.iter().position(|&d| d == c).unwrap_or_default();
            (acc << 5) | digit as u64
        })
    }
}

/// Shown in two halves ("K3M9-2QXA"), easier to read out; [`FailureId::parse`] takes either.
impl fmt::Display for FailureId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (head, tail) = self.0.split_at(FAILURE_ID_LEN / 2);
        write!(f, "{head}-{tail}")
    }
}

impl Serialize for FailureId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for FailureId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = String::deserialize(deserializer)?;
        Self::parse(&id).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ids_are_bounded_and_plain() {
        assert!(is_valid_id("3f2a-9c_1.x:y"));
        assert!(!is_valid_id(""));
        assert!(!is_valid_id("../etc/passwd"));
        assert!(!is_valid_id("<script>"));
        assert!(!is_valid_id(&"a".repeat(MAX_ID_LEN + 1)));
    }

    #[test]
    fn valid_ids_round_trip_as_plain_strings() {
        let uuid = "0b5e3c1a-7f2d-4c4e-9a51-2d3f6b7c8e90";
        let thread: ThreadId = serde_json::from_str(&format!("\"{uuid}\"")).unwrap();
        assert_eq!(thread.as_str(), uuid);
        assert_eq!(serde_json::to_string(&thread).unwrap(), format!("\"{uuid}\""));
        let longest = "a".repeat(MAX_ID_LEN);
        let task: TaskId = serde_json::from_value(serde_json::json!(longest)).unwrap();
        assert_eq!(serde_json::to_value(&task).unwrap(), serde_json::json!(longest));
        let op = OperationId::parse("run-now-1:2.x_y").unwrap();
        assert_eq!(serde_json::from_str::<OperationId>(&serde_json::to_string(&op).unwrap()).unwrap(), op);
        // Inside a struct and an Option, still a bare string (or absent).
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        #[serde(rename_all = "camelCase")]
        struct P {
            run_id: RunId,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            file_id: Option<FileId>,
        }
        let p: P = serde_json::from_str(r#"{"runId":"r1"}"#).unwrap();
        assert_eq!(p, P { run_id: RunId::parse("r1").unwrap(), file_id: None });
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"runId":"r1"}"#);
    }

    #[test]
    fn invalid_ids_fail_to_deserialize_naming_their_kind() {
        for (json, why) in [
            (r#""""#, "empty"),
            (r#""../etc/passwd""#, "not allowed"),
            (r#""<script>""#, "not allowed"),
            (r#""a b""#, "not allowed"),
            (&format!("\"{}\"", "a".repeat(MAX_ID_LEN + 1)), "129 bytes"),
        ] {
            let err = serde_json::from_str::<TaskId>(json).unwrap_err().to_string();
            assert!(err.contains("not a valid task id") && err.contains(why), "{json}: {err}");
            let err = serde_json::from_str::<ProposalId>(json).unwrap_err().to_string();
            assert!(err.contains("proposal id"), "{err}");
        }
        let err = serde_json::from_str::<ScheduleId>("42").unwrap_err().to_string();
        assert!(err.contains("string"), "a number is not an id: {err}");
        let err = serde_json::from_str::<ThreadId>(r#""<b>hi</b>""#).unwrap_err().to_string();
        assert!(!err.contains("<b>"), "the error never repeats the input: {err}");
    }

    #[test]
    fn each_kind_names_itself_and_becomes_an_invalid_input_error() {
        let kinds = [
            ThreadId::parse("").unwrap_err(),
            TaskId::parse("").unwrap_err(),
            RunId::parse("").unwrap_err(),
            ProposalId::parse("").unwrap_err(),
            ScheduleId::parse("").unwrap_err(),
            FileId::parse("").unwrap_err(),
            OperationId::parse("").unwrap_err(),
        ]
        .map(|e| e.kind());
        assert_eq!(kinds, ["thread id", "task id", "run id", "proposal id", "schedule id", "file id", "operation id"]);
        let ipc: IpcError = FileId::parse("a/b").unwrap_err().into();
        assert_eq!(ipc.code, crate::ErrorCode::InvalidInput);
        assert!(ipc.message.contains("file id"), "{}", ipc.message);
    }

    #[test]
    fn ids_read_as_their_text() {
        let id = ScheduleId::trusted("s-1");
        assert_eq!(id, "s-1");
        assert_eq!(id.to_string(), "s-1");
        assert_eq!(&*id, "s-1");
        let set: std::collections::HashSet<ScheduleId> = [id.clone()].into();
        assert!(set.contains("s-1"), "looked up by &str through Borrow");
        assert_eq!(String::from(id), "s-1");
    }

    #[test]
    fn failure_ids_are_eight_crockford_characters_read_forgivingly() {
        let id = FailureId::from_bits(0);
        assert_eq!(id.as_str(), "00000000");
        let id = FailureId::from_bits(u64::MAX);
        assert_eq!(id.as_str(), "ZZZZZZZZ", "only the low 40 bits count");
        let id = FailureId::from_bits(0x12_3456_789a);
        assert_eq!(id.as_str().len(), FAILURE_ID_LEN);
        assert_eq!(id.bits(), 0x12_3456_789a, "the store finds an effect's failure by its bits");
        assert_eq!(FailureId::from_bits(u64::MAX).bits(), (1 << 40) - 1);
        assert_eq!(id.to_string(), format!("{}-{}", &id.as_str()[..4], &id.as_str()[4..]));
        // Typed back over the phone: lower case, a hyphen, O for 0 and l for 1.
        let typed = id.as_str().to_ascii_lowercase().replace('0', "o").replace('1', "l");
        let typed = format!("{}-{}", &typed[..4], &typed[4..]);
        assert_eq!(FailureId::parse(&typed).unwrap(), id);
        assert_eq!(serde_json::from_value::<FailureId>(serde_json::json!(typed)).unwrap(), id);
        for bad in ["", "ABC", "ABCDEFGHJ", "ABCDEFGU", "<script>", "ABCD\u{e9}FGH"] {
            let err = FailureId::parse(bad).unwrap_err();
            assert_eq!(err.kind(), "failure id", "{bad}");
        }
    }
}
