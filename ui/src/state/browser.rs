//! Take control's input, as plain data: where a click on the shown frame lands on the page,
//! and which key a keyboard event is.

use hearth_protocol::browser::{ControlInput, KeyKind, MouseButton, MouseKind};

/// A point on the shown picture (`offset` within `shown` pixels) in the page's own pixels
/// (`frame` wide), clamped to the page.
pub fn to_page(offset: f64, shown: f64, frame: u32) -> f64 {
    let frame = f64::from(frame);
    if shown <= 0.0 || !offset.is_finite() {
        return 0.0;
    }
    (offset * frame / shown).clamp(0.0, frame)
}

/// A DOM mouse button number as Take control's.
pub fn mouse_button(button: i16) -> MouseButton {
    match button {
        0 => MouseButton::Left,
        1 => MouseButton::Middle,
        2 => MouseButton::Right,
        _ => MouseButton::None,
    }
}

/// The modifier bits CDP takes: Alt 1, Ctrl 2, Meta 4, Shift 8.
pub fn modifiers(alt: bool, ctrl: bool, meta: bool, shift: bool) -> u8 {
    u8::from(alt) | (u8::from(ctrl) << 1) | (u8::from(meta) << 2) | (u8::from(shift) << 3)
}

/// A mouse input at page point (`x`, `y`).
pub fn mouse(kind: MouseKind, x: f64, y: f64, button: MouseButton, click_count: u8, modifiers: u8) -> ControlInput {
    ControlInput::Mouse { kind, x, y, button, click_count, delta_x: 0.0, delta_y: 0.0, modifiers }
}

/// A key going down or up.
pub fn key(down: bool, key: String, code: String, modifiers: u8) -> ControlInput {
    ControlInput::Key { kind: if down { KeyKind::Down } else { KeyKind::Up }, key, code, modifiers }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_click_on_the_shown_picture_lands_on_the_same_spot_of_the_page() {
        // The picture shown at 640 px wide for a 1280 px page: its middle is the page's middle.
        assert_eq!(to_page(320.0, 640.0, 1280), 640.0);
        assert_eq!(to_page(700.0, 640.0, 1280), 1280.0, "clamped to the page");
        assert_eq!(to_page(-3.0, 640.0, 1280), 0.0);
        assert_eq!(to_page(10.0, 0.0, 1280), 0.0, "nothing shown yet");
        assert_eq!(mouse_button(0), MouseButton::Left);
        assert_eq!(mouse_button(2), MouseButton::Right);
        assert_eq!(modifiers(false, true, false, true), 2 | 8);
    }
}
