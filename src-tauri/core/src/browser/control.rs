//! Take control: the owner's live view of a browser (a CDP screencast, each frame acknowledged
//! so Chromium sends the next) and the owner's mouse, keys and text, sent as CDP input.
//!
//! While the owner holds control, the agent's looks and actions on that browser are refused
//! with [`BrowserError::OwnerHasControl`]; Give back ends the screencast.

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams,
    MouseButton as CdpButton,
};
use chromiumoxide::cdp::browser_protocol::page::{EventScreencastFrame, ScreencastFrameAckParams};
use futures::StreamExt;
use hearth_protocol::browser::{ControlFrame, ControlInput, ControlNavigation, KeyKind, MAX_ACT_VALUE, MouseButton, MouseKind};

use super::error::BrowserError;

/// The viewport every page gets: Chromium's window, and the frame Take control's pointer
/// moves in.
pub const VIEWPORT: (u32, u32) = (1280, 800);

/// Forwards the page's screencast frames to `frames`, acknowledging each, until the receiver
/// is gone or the page ends.
pub(super) async fn forward_frames(
    page: chromiumoxide::Page,
    mut listener: chromiumoxide::listeners::EventStream<EventScreencastFrame>,
    frames: tokio::sync::mpsc::Sender<ControlFrame>,
) {
    let mut seq = 0;
    while let Some(frame) = listener.next().await {
        // Acknowledged first: Chromium sends the next frame only after this one's ack.
        let _ = page.execute(ScreencastFrameAckParams::new(frame.session_id)).await;
        seq += 1;
        let data: &str = frame.data.as_ref();
        let sized = |v: f64, fallback: u32| if v.is_finite() && v > 0.0 { v.round() as u32 } else { fallback };
        let shown = ControlFrame {
            jpeg_base64: data.to_owned(),
            width: sized(frame.metadata.device_width, VIEWPORT.0),
            height: sized(frame.metadata.device_height, VIEWPORT.1),
            seq,
        };
        if frames.send(shown).await.is_err() {
            break;
        }
    }
}

/// One owner input as the CDP command that performs it.
pub(super) enum Command {
    Mouse(DispatchMouseEventParams),
    Key(DispatchKeyEventParams),
    Text(InsertTextParams),
    Script(&'static str),
}

/// Checks `input` and turns it into its command; an input outside the viewport, not a number,
/// or text past the limit is refused.
pub(super) fn command_for(input: &ControlInput) -> Result<Command, BrowserError> {
    let bad = |why: &str| Err(BrowserError::BadElement(format!("that input cannot be sent: {why}")));
    match input {
        ControlInput::Mouse { kind, x, y, button, click_count, delta_x, delta_y, modifiers } => {
            let inside = |v: f64, max: u32| v.is_finite() && (0.0..=f64::from(max)).contains(&v);
            if !inside(*x, VIEWPORT.0) || !inside(*y, VIEWPORT.1) || !delta_x.is_finite() || !delta_y.is_finite() {
                return bad("the point is outside the page");
            }
            let kind = match kind {
                MouseKind::Move => DispatchMouseEventType::MouseMoved,
                MouseKind::Down => DispatchMouseEventType::MousePressed,
                MouseKind::Up => DispatchMouseEventType::MouseReleased,
                MouseKind::Wheel => DispatchMouseEventType::MouseWheel,
            };
            let (cdp_button, held) = match button {
                MouseButton::None => (CdpButton::None, 0),
                MouseButton::Left => (CdpButton::Left, 1),
                MouseButton::Right => (CdpButton::Right, 2),
                MouseButton::Middle => (CdpButton::Middle, 4),
            };
            let mut event = DispatchMouseEventParams::new(kind.clone(), *x, *y);
            event.button = Some(cdp_button);
            event.modifiers = Some(i64::from(*modifiers & 0x0f));
            // A button is held during a press and a drag, not after its release.
            event.buttons = Some(if matches!(kind, DispatchMouseEventType::MouseReleased) { 0 } else { held });
            event.click_count = Some(i64::from((*click_count).min(3)));
            if matches!(kind, DispatchMouseEventType::MouseWheel) {
                event.delta_x = Some(delta_x.clamp(-10_000.0, 10_000.0));
                event.delta_y = Some(delta_y.clamp(-10_000.0, 10_000.0));
            }
            Ok(Command::Mouse(event))
        }
        ControlInput::Key { kind, key, code, modifiers } => {
            if key.is_empty() || key.chars().count() > 32 || code.chars().count() > 32 {
                return bad("not a key");
            }
            let down = matches!(kind, KeyKind::Down);
            let mut event = DispatchKeyEventParams::new(if down { DispatchKeyEventType::KeyDown } else { DispatchKeyEventType::KeyUp });
            event.key = Some(key.clone());
            event.code = Some(code.clone());
            let modifiers = *modifiers & 0x0f;
            event.modifiers = Some(i64::from(modifiers));
            let named = if key == " " { "Space" } else { key.as_str() };
            if let Some(known) = super::page::key(named) {
                event.windows_virtual_key_code = Some(known.key_code);
                if down {
                    event.text = known.text.map(str::to_owned);
                }
            } else {
                let mut chars = key.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    if c.is_ascii_alphanumeric() {
                        event.windows_virtual_key_code = Some(i64::from(u32::from(c.to_ascii_uppercase())));
                    }
                    // A character types itself unless Ctrl or Meta makes it a shortcut.
                    if down && modifiers & (2 | 4) == 0 {
                        event.text = Some(key.clone());
                    }
                }
            }
            Ok(Command::Key(event))
        }
        ControlInput::Text { text } => {
            if text.chars().count() > MAX_ACT_VALUE {
                return bad("the text is longer than 4,000 characters");
            }
            Ok(Command::Text(InsertTextParams::new(text.clone())))
        }
        ControlInput::Navigate { to } => Ok(Command::Script(match to {
            ControlNavigation::Back => "history.back()",
            ControlNavigation::Forward => "history.forward()",
            ControlNavigation::Reload => "location.reload()",
        })),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn inputs_become_the_cdp_input_a_person_would_send() {
        let down = ControlInput::Mouse {
            kind: MouseKind::Down,
            x: 10.0,
            y: 20.0,
            button: MouseButton::Left,
            click_count: 1,
            delta_x: 0.0,
            delta_y: 0.0,
            modifiers: 0,
        };
        let Command::Mouse(event) = command_for(&down).unwrap() else { panic!("not a mouse event") };
        assert_eq!((event.buttons, event.click_count), (Some(1), Some(1)));
        let up = ControlInput::Mouse {
            kind: MouseKind::Up,
            x: 10.0,
            y: 20.0,
            button: MouseButton::Left,
            click_count: 1,
            delta_x: 0.0,
            delta_y: 0.0,
            modifiers: 0,
        };
        let Command::Mouse(event) = command_for(&up).unwrap() else { panic!("not a mouse event") };
        assert_eq!(event.buttons, Some(0));
        let a = ControlInput::Key { kind: KeyKind::Down, key: "a".into(), code: "KeyA".into(), modifiers: 0 };
        let Command::Key(event) = command_for(&a).unwrap() else { panic!("not a key") };
        assert_eq!((event.text.as_deref(), event.windows_virtual_key_code), (Some("a"), Some(65)));
        let copy = ControlInput::Key { kind: KeyKind::Down, key: "c".into(), code: "KeyC".into(), modifiers: 2 };
        let Command::Key(event) = command_for(&copy).unwrap() else { panic!("not a key") };
        assert_eq!(event.text, None, "Ctrl+C is a shortcut, not a typed c");
        let enter = ControlInput::Key { kind: KeyKind::Down, key: "Enter".into(), code: "Enter".into(), modifiers: 0 };
        let Command::Key(event) = command_for(&enter).unwrap() else { panic!("not a key") };
        assert_eq!((event.text.as_deref(), event.windows_virtual_key_code), (Some("\r"), Some(13)));
        for refused in [
            ControlInput::Mouse {
                kind: MouseKind::Move,
                x: f64::NAN,
                y: 1.0,
                button: MouseButton::None,
                click_count: 0,
                delta_x: 0.0,
                delta_y: 0.0,
                modifiers: 0,
            },
            ControlInput::Mouse {
                kind: MouseKind::Move,
                x: 5000.0,
                y: 1.0,
                button: MouseButton::None,
                click_count: 0,
                delta_x: 0.0,
                delta_y: 0.0,
                modifiers: 0,
            },
            ControlInput::Text { text: "x".repeat(MAX_ACT_VALUE + 1) },
            ControlInput::Key { kind: KeyKind::Down, key: String::new(), code: String::new(), modifiers: 0 },
        ] {
            assert!(command_for(&refused).is_err(), "{refused:?}");
        }
    }
}
