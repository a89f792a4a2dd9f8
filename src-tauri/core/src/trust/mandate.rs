//! Which calls a standing order covers: decided from the call's tool and arguments alone, by
//! an exhaustive match, so a mandate never covers more than its grant names.
//!
//! The policy ([`super::decide`]) stays as it is; dispatch asks [`covers`] only for a call the
//! policy held, inside a task, and the gate asks [`covers_draft`] for a task's prepared email or
//! form, as the owner would review it; either then counts a use in the store's
//! compare-and-swap.

use hearth_protocol::ToolName;
use hearth_protocol::approvals::ProposalDraft;
use hearth_protocol::mandates::MandateGrant;
use hearth_protocol::mcp::McpToolRef;
use serde_json::Value;

/// Whether `grant` covers the call `tool(args)`.
pub fn covers(grant: &MandateGrant, tool: ToolName, args: &Value) -> bool {
    match grant {
        MandateGrant::ComputerCommands => {
            matches!(tool, ToolName::RunComputerCommand | ToolName::WriteComputerFile | ToolName::MkdirComputer)
        }
        MandateGrant::RememberFacts => tool == ToolName::RememberFact,
        MandateGrant::SiteActions { origin } => match tool {
            ToolName::BrowseWeb | ToolName::ReadWeb | ToolName::LookPage => {
                args.get("url").and_then(Value::as_str).is_some_and(|url| origin_of(url).as_deref() == Some(origin.as_str()))
            }
            _ => false,
        },
        MandateGrant::SendMail { .. } | MandateGrant::SendForms { .. } | MandateGrant::PluginTool { .. } => false,
    }
}

/// Whether `grant` covers a call of the plug-in tool `tool` (any arguments: the grant names the
/// tool, and the owner's per-tool policy still decides whether it may be called at all).
pub fn covers_plugin(grant: &MandateGrant, tool: &McpToolRef) -> bool {
    match grant {
        MandateGrant::PluginTool { tool: granted } => granted == tool,
        MandateGrant::ComputerCommands
        | MandateGrant::RememberFacts
        | MandateGrant::SiteActions { .. }
        | MandateGrant::SendMail { .. }
        | MandateGrant::SendForms { .. } => false,
    }
}

/// Whether `grant` approves `draft` — the proposal exactly as the owner would review it (the
/// workspace resolved its account and recipients): an email whose every recipient is named by
/// a mail grant, or a form sent from a page of a form grant's origin to that same origin (a
/// grant to open a site's pages sends nothing).
/// Events and held calls are never approved by a standing order.
pub fn covers_draft(grant: &MandateGrant, draft: &ProposalDraft) -> bool {
    match (grant, draft) {
        (MandateGrant::SendMail { recipients }, ProposalDraft::EmailSend(email)) => {
            !email.to.is_empty() && email.to.iter().chain(&email.cc).chain(&email.bcc).all(|address| recipients.contains(address))
        }
        (MandateGrant::SendForms { origin }, ProposalDraft::WebSubmit(form)) => {
            let ours = |url: &str| origin_of(url).as_deref() == Some(origin.as_str());
            ours(&form.page_url) && ours(&form.destination)
        }
        (
            MandateGrant::SendMail { .. }
            | MandateGrant::SendForms { .. }
            | MandateGrant::SiteActions { .. }
            | MandateGrant::ComputerCommands
            | MandateGrant::RememberFacts
            | MandateGrant::PluginTool { .. },
            ProposalDraft::EmailSend(_)
            | ProposalDraft::WebSubmit(_)
            | ProposalDraft::CalendarCreate(_)
            | ProposalDraft::CalendarUpdate(_)
            | ProposalDraft::CalendarDelete(_)
            | ProposalDraft::HeldCall(_),
        ) => false,
    }
}

/// An https address's origin (`https://host[:port]`, the port only when not 443).
fn origin_of(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    if url.scheme() != "https" || !url.username().is_empty() || url.password().is_some() {
        return None;
    }
    Some(url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_grant_covers_its_own_tools_and_nothing_else() {
        let site = MandateGrant::SiteActions { origin: "https://shop.example".into() };
        let args = json!({ "url": "https://shop.example/cart?x=1", "command": "ls", "text": "a fact" });
        for &tool in ToolName::ALL {
            let covered: Vec<bool> =
                [&MandateGrant::ComputerCommands, &MandateGrant::RememberFacts, &site].iter().map(|g| covers(g, tool, &args)).collect();
            let expected = match tool {
                ToolName::RunComputerCommand | ToolName::WriteComputerFile | ToolName::MkdirComputer => vec![true, false, false],
                ToolName::RememberFact => vec![false, true, false],
                ToolName::BrowseWeb | ToolName::ReadWeb | ToolName::LookPage => vec![false, false, true],
                _ => vec![false, false, false],
            };
            assert_eq!(covered, expected, "{tool}");
        }
    }

    #[test]
    fn a_site_grant_covers_its_exact_origin_only() {
        let site = MandateGrant::SiteActions { origin: "https://shop.example".into() };
        for url in [
            "https://shop.example.evil.example/",
            "http://shop.example/",
            "https://shop.example:8443/",
            "https://u@shop.example/",
            "shop.example",
        ] {
            assert!(!covers(&site, ToolName::ReadWeb, &json!({ "url": url })), "{url}");
        }
        assert!(covers(&site, ToolName::ReadWeb, &json!({ "url": "https://SHOP.example:443/a" })));
    }

    fn email(to: &[&str], cc: &[&str]) -> ProposalDraft {
        ProposalDraft::EmailSend(hearth_protocol::approvals::EmailDraft {
            to: to.iter().map(|s| (*s).to_owned()).collect(),
            cc: cc.iter().map(|s| (*s).to_owned()).collect(),
            bcc: vec![],
            subject: "s".into(),
            body: "b".into(),
            attachments: vec![],
            thread_id: None,
            in_reply_to: None,
            reply_to: None,
        })
    }

    #[test]
    fn a_mail_grant_covers_an_email_only_when_every_recipient_is_named() {
        let grant = MandateGrant::SendMail { recipients: vec!["friend@example.com".into(), "team@example.com".into()] };
        assert!(covers_draft(&grant, &email(&["friend@example.com"], &[])));
        assert!(covers_draft(&grant, &email(&["friend@example.com"], &["team@example.com"])));
        assert!(!covers_draft(&grant, &email(&["friend@example.com"], &["mallory@attacker.example"])), "a copy to another");
        assert!(!covers_draft(&grant, &email(&["Friend@example.com"], &[])), "compared exactly");
        assert!(!covers_draft(&grant, &email(&[], &[])));
        assert!(!covers_draft(&MandateGrant::RememberFacts, &email(&["friend@example.com"], &[])));
        assert!(!covers(&grant, ToolName::PrepareEmail, &json!({ "to": ["friend@example.com"] })), "only the reviewed draft counts");
    }

    fn form(page: &str, destination: &str) -> ProposalDraft {
        ProposalDraft::WebSubmit(hearth_protocol::approvals::WebSubmitDraft {
            profile: "p".into(),
            page_url: page.into(),
            page_title: "t".into(),
            reference: "0:1".into(),
            gesture: hearth_protocol::approvals::SubmitGesture::Click,
            element: "button".into(),
            method: "POST".into(),
            destination: destination.into(),
            fields: vec![],
            form_version: "v".into(),
        })
    }

    #[test]
    fn a_form_grant_covers_a_form_within_its_origin_and_a_site_grant_sends_nothing() {
        let forms = MandateGrant::SendForms { origin: "https://shop.example".into() };
        assert!(covers_draft(&forms, &form("https://shop.example/cart", "https://shop.example/order")));
        assert!(!covers_draft(&forms, &form("https://shop.example/cart", "https://collect.example/x")), "sent elsewhere");
        assert!(!covers_draft(&forms, &form("https://evil.example/", "https://shop.example/order")), "from another page");
        assert!(!covers_draft(&forms, &form("http://shop.example/cart", "http://shop.example/order")), "not https");
        let site = MandateGrant::SiteActions { origin: "https://shop.example".into() };
        assert!(!covers_draft(&site, &form("https://shop.example/cart", "https://shop.example/order")));
        for &tool in ToolName::ALL {
            assert!(!covers(&forms, tool, &json!({ "url": "https://shop.example/" })), "{tool}: a form grant opens nothing");
        }
    }
}
