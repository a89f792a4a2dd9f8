//! Standing orders: a bounded, data-only mandate the owner grants a task or a schedule.
//!
//! Background work always reads content from outside the owner, so every lasting effect it
//! asks for waits on a card (`ProposalDraft::HeldCall`). A mandate lets one kind of effect
//! through without a card, at most `limit` times per window, until it expires or is revoked.
//! It is checked at dispatch, never by the model: a ceiling, not a hint.

use serde::{Deserialize, Serialize};

use crate::IpcError;

/// The longest a mandate may live: 90 days.
pub const MAX_MANDATE_MS: i64 = 90 * 24 * 60 * 60 * 1000;
/// The most uses a mandate may allow per window.
pub const MAX_MANDATE_USES: u32 = 1_000;
/// The longest origin a site grant may name.
const MAX_ORIGIN_CHARS: usize = 300;
/// The most recipients a mail grant may name.
pub const MAX_MANDATE_RECIPIENTS: usize = 50;

/// What a mandate belongs to: the task whose runs may use it, or the schedule whose tasks may.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum MandateHolder {
    /// One task (an agent task, a monitor).
    Task {
        /// The task's id.
        task_id: crate::ids::TaskId,
    },
    /// Every task a schedule starts.
    Schedule {
        /// The schedule's id.
        schedule_id: crate::ids::ScheduleId,
    },
}

impl MandateHolder {
    /// Stored spelling of the kind.
    pub const fn kind_str(&self) -> &'static str {
        match self {
            Self::Task { .. } => "task",
            Self::Schedule { .. } => "schedule",
        }
    }

    /// The task's or schedule's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Task { task_id } => task_id,
            Self::Schedule { schedule_id } => schedule_id,
        }
    }
}

/// Which calls a mandate covers: a closed set, each decided from the call's own arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum MandateGrant {
    /// run_computer_command, write_computer_file and mkdir_computer in Hearth's computer.
    ComputerCommands,
    /// Opening addresses the agent built on one https origin (browse_web, read_web, look_page).
    SiteActions {
        /// `https://host[:port]`, no path.
        origin: String,
    },
    /// Sending a prepared form from a page of one https origin to that same origin.
    SendForms {
        /// `https://host[:port]`, no path.
        origin: String,
    },
    /// remember_fact.
    RememberFacts,
    /// Sending an email (a prepared one, from the account in use) whose every recipient — to,
    /// copy and blind copy — is one of these.
    SendMail {
        /// Bare addresses, domains lower-cased, no duplicates.
        recipients: Vec<String>,
    },
    /// Calling one of the owner's plug-in tools (an MCP server's) that would otherwise wait on a
    /// card each time, with any arguments. Only a tool the owner allowed or asked about is ever
    /// called: a tool turned off stays off under any standing order.
    PluginTool {
        /// The tool.
        tool: crate::mcp::McpToolRef,
    },
}

impl MandateGrant {
    /// Stored spelling of the kind.
    pub const fn kind_str(&self) -> &'static str {
        match self {
            Self::ComputerCommands => "computer_commands",
            Self::SiteActions { .. } => "site_actions",
            Self::RememberFacts => "remember_facts",
            Self::SendMail { .. } => "send_mail",
            Self::SendForms { .. } => "send_forms",
            Self::PluginTool { .. } => "plugin_tool",
        }
    }

    /// The grant from its stored kind, origin and recipients; `None` for an unknown kind or a
    /// missing or extra part.
    pub fn from_stored(kind: &str, origin: Option<String>, recipients: Option<Vec<String>>) -> Option<Self> {
        match (kind, origin, recipients) {
            ("computer_commands", None, None) => Some(Self::ComputerCommands),
            ("site_actions", Some(origin), None) => Some(Self::SiteActions { origin }),
            ("remember_facts", None, None) => Some(Self::RememberFacts),
            ("send_mail", None, Some(recipients)) => Some(Self::SendMail { recipients }),
            ("send_forms", Some(origin), None) => Some(Self::SendForms { origin }),
            ("plugin_tool", Some(name), None) => crate::mcp::McpToolRef::from_wire(&name).map(|tool| Self::PluginTool { tool }),
            _ => None,
        }
    }

    /// The site's origin, for a site grant.
    pub fn origin(&self) -> Option<&str> {
        match self {
            Self::SiteActions { origin } | Self::SendForms { origin } => Some(origin),
            Self::ComputerCommands | Self::RememberFacts | Self::SendMail { .. } | Self::PluginTool { .. } => None,
        }
    }

    /// What the store keeps in a grant's `origin` column: a site grant's origin, or a plug-in
    /// tool grant's tool by its wire name.
    pub fn stored_origin(&self) -> Option<String> {
        match self {
            Self::SiteActions { origin } | Self::SendForms { origin } => Some(origin.clone()),
            Self::PluginTool { tool } => tool.wire_name(),
            Self::ComputerCommands | Self::RememberFacts | Self::SendMail { .. } => None,
        }
    }

    /// The recipients, for a mail grant.
    pub fn recipients(&self) -> Option<&[String]> {
        match self {
            Self::SendMail { recipients } => Some(recipients),
            Self::ComputerCommands | Self::RememberFacts | Self::SiteActions { .. } | Self::SendForms { .. } | Self::PluginTool { .. } => {
                None
            }
        }
    }
}

/// The window a mandate's count is per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MandateWindow {
    /// Per hour.
    Hour,
    /// Per day.
    Day,
    /// Over the mandate's whole life.
    Whole,
}

impl MandateWindow {
    /// The window's length in ms; 0 for the whole life.
    pub const fn millis(self) -> i64 {
        match self {
            Self::Hour => 60 * 60 * 1000,
            Self::Day => 24 * 60 * 60 * 1000,
            Self::Whole => 0,
        }
    }

    /// The window from its stored length.
    pub const fn from_millis(ms: i64) -> Option<Self> {
        match ms {
            3_600_000 => Some(Self::Hour),
            86_400_000 => Some(Self::Day),
            0 => Some(Self::Whole),
            _ => None,
        }
    }
}

/// One mandate, as stored and listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mandate {
    /// Its id.
    pub id: String,
    /// Whose runs may use it.
    pub holder: MandateHolder,
    /// Which calls it covers.
    pub grant: MandateGrant,
    /// How many uses per window.
    pub limit: u32,
    /// The window.
    pub window: MandateWindow,
    /// Uses in the current window.
    pub uses: u32,
    /// When the current window began, Unix ms.
    pub window_start: i64,
    /// When it stops allowing anything, Unix ms.
    pub expires_at: i64,
    /// Granted, Unix ms.
    pub created_at: i64,
    /// Revoked, Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<i64>,
}

impl Mandate {
    /// Whether it still allows anything at `now` (not revoked, not expired).
    pub fn is_live(&self, now: i64) -> bool {
        self.revoked_at.is_none() && self.expires_at > now
    }
}

/// `mandate_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MandateListParams {
    /// Only this holder's mandates; every mandate when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<MandateHolder>,
}

impl MandateListParams {
    /// The holder's id, when given, is not empty.
    pub fn validate(&self) -> Result<(), IpcError> {
        match &self.holder {
            Some(holder) => check_holder(holder),
            None => Ok(()),
        }
    }
}

/// `mandate_list`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MandateListResponse {
    /// Newest first.
    pub mandates: Vec<Mandate>,
}

/// `mandate_grant`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MandateGrantParams {
    /// Whose runs may use it.
    pub holder: MandateHolder,
    /// Which calls it covers.
    pub grant: MandateGrant,
    /// How many uses per window (1 to [`MAX_MANDATE_USES`]).
    pub limit: u32,
    /// The window.
    pub window: MandateWindow,
    /// How long it lives from now, ms (at most [`MAX_MANDATE_MS`]).
    pub lasts_ms: i64,
}

impl MandateGrantParams {
    /// A holder, a bounded count and life, and a site grant's https origin.
    pub fn validate(&self) -> Result<(), IpcError> {
        check_holder(&self.holder)?;
        if self.limit == 0 || self.limit > MAX_MANDATE_USES {
            return Err(IpcError::invalid(format!("A standing order allows 1 to {MAX_MANDATE_USES} uses per window.")));
        }
        if self.lasts_ms <= 0 || self.lasts_ms > MAX_MANDATE_MS {
            return Err(IpcError::invalid("A standing order lasts more than nothing and at most 90 days."));
        }
        match &self.grant {
            MandateGrant::SiteActions { origin } | MandateGrant::SendForms { origin } => check_origin(origin),
            // Bounded here; the core normalizes each address as a draft's are, then checks them
            // with [`check_recipients`].
            MandateGrant::SendMail { recipients } => check_recipient_list(recipients),
            MandateGrant::PluginTool { tool } => match tool.wire_name() {
                Some(_) => Ok(()),
                None => {
                    Err(IpcError::invalid("That plug-in tool's name cannot be offered to the agent, so no standing order can cover it."))
                }
            },
            MandateGrant::ComputerCommands | MandateGrant::RememberFacts => Ok(()),
        }
    }
}

/// `mandate_revoke`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MandateRevokeParams {
    /// The mandate.
    pub mandate_id: String,
}

impl MandateRevokeParams {
    /// An id.
    pub fn validate(&self) -> Result<(), IpcError> {
        if self.mandate_id.trim().is_empty() || self.mandate_id.len() > 100 {
            return Err(IpcError::invalid("The standing order's id is not valid."));
        }
        Ok(())
    }
}

fn check_holder(holder: &MandateHolder) -> Result<(), IpcError> {
    let id = holder.id();
    if id.trim().is_empty() || id.len() > 100 {
        return Err(IpcError::invalid("Name the task or schedule the standing order is for."));
    }
    Ok(())
}

/// A mail grant, as the window sends it: 1 to [`MAX_MANDATE_RECIPIENTS`] entries, each short
/// enough to be an address (a name and `<address>` is fine; the core takes the address out).
pub fn check_recipient_list(recipients: &[String]) -> Result<(), IpcError> {
    if recipients.is_empty() || recipients.len() > MAX_MANDATE_RECIPIENTS {
        return Err(IpcError::invalid(format!("A standing order to send mail names 1 to {MAX_MANDATE_RECIPIENTS} recipients.")));
    }
    match recipients.iter().find(|r| r.trim().is_empty() || r.len() > 400) {
        Some(bad) => Err(IpcError::invalid(format!("{bad:?} is not an email address like friend@example.com."))),
        None => Ok(()),
    }
}

/// A mail grant names 1 to [`MAX_MANDATE_RECIPIENTS`] distinct bare addresses, each already
/// normalized as a draft's recipients are (the core does it before it validates), so the check
/// at the gate compares them exactly: an address the owner did not name is never covered.
pub fn check_recipients(recipients: &[String]) -> Result<(), IpcError> {
    if recipients.is_empty() || recipients.len() > MAX_MANDATE_RECIPIENTS {
        return Err(IpcError::invalid(format!("A standing order to send mail names 1 to {MAX_MANDATE_RECIPIENTS} recipients.")));
    }
    for (index, address) in recipients.iter().enumerate() {
        let plain = address.len() <= 254
            && address.split_once('@').is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.'))
            && !address.chars().any(|c| c.is_whitespace() || c.is_control() || "<>,;\"".contains(c));
        if !plain {
            return Err(IpcError::invalid(format!("{address:?} is not a plain email address like friend@example.com.")));
        }
        if recipients[..index].contains(address) {
            return Err(IpcError::invalid(format!("{address} is named twice.")));
        }
    }
    Ok(())
}

/// An origin is `https://host[:port]`: lower-case, no path, query, user or fragment.
pub fn check_origin(origin: &str) -> Result<(), IpcError> {
    let bad = || IpcError::invalid(format!("{origin:?} is not a site origin; give one like https://shop.example."));
    let host = origin.strip_prefix("https://").ok_or_else(bad)?;
    if origin.len() > MAX_ORIGIN_CHARS
        || host.is_empty()
        || !host.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-.:[]".contains(&b))
    {
        return Err(bad());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_site_grant_names_an_https_origin_only() {
        assert!(check_origin("https://shop.example").is_ok());
        assert!(check_origin("https://shop.example:8443").is_ok());
        for bad in ["http://shop.example", "https://shop.example/", "https://Shop.example", "https://a@b", "https://"] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_wire_spells_kinds_in_snake_case_and_fields_in_camel_case() {
        let holder = serde_json::to_value(MandateHolder::Task { task_id: crate::ids::TaskId::parse("t1").unwrap() }).unwrap();
        assert_eq!(holder, serde_json::json!({ "kind": "task", "taskId": "t1" }));
        let grant = serde_json::to_value(MandateGrant::ComputerCommands).unwrap();
        assert_eq!(grant, serde_json::json!({ "kind": "computer_commands" }));
    }

    #[test]
    fn grants_and_windows_round_trip_their_stored_spelling() {
        for grant in [
            MandateGrant::ComputerCommands,
            MandateGrant::RememberFacts,
            MandateGrant::SiteActions { origin: "https://a.example".into() },
            MandateGrant::SendMail { recipients: vec!["a@b.example".into()] },
            MandateGrant::SendForms { origin: "https://a.example".into() },
            MandateGrant::PluginTool {
                tool: crate::mcp::McpToolRef { server: crate::mcp::McpServerName::parse("notes").unwrap(), tool: "record".into() },
            },
        ] {
            let origin = grant.stored_origin();
            let recipients = grant.recipients().map(<[String]>::to_vec);
            assert_eq!(MandateGrant::from_stored(grant.kind_str(), origin, recipients), Some(grant));
        }
        for window in [MandateWindow::Hour, MandateWindow::Day, MandateWindow::Whole] {
            assert_eq!(MandateWindow::from_millis(window.millis()), Some(window));
        }
        assert_eq!(MandateGrant::from_stored("send_all_mail", None, None), None);
        assert_eq!(MandateGrant::from_stored("send_mail", None, None), None, "a mail grant names its recipients");
    }

    #[test]
    fn a_mail_grant_names_plain_distinct_lower_cased_addresses() {
        assert!(check_recipients(&["friend@example.com".into(), "b@c.example".into()]).is_ok());
        assert!(check_recipients(&[]).is_err());
        for bad in ["friend@example", "@example.com", "a b@example.com", "a@b.example>", "x@y.example,z@w.example"] {
            assert!(check_recipients(&[bad.to_owned()]).is_err(), "{bad}");
        }
        assert!(check_recipients(&["a@b.example".into(), "a@b.example".into()]).is_err());
        let many: Vec<String> = (0..=MAX_MANDATE_RECIPIENTS).map(|i| format!("p{i}@example.com")).collect();
        assert!(check_recipients(&many).is_err());
        assert!(check_recipient_list(&["Friend <friend@EXAMPLE.com>".into()]).is_ok(), "the core normalizes it");
        assert!(check_recipient_list(&[" ".into()]).is_err());
        assert!(check_recipient_list(&many).is_err());
    }
}
