//! The parts of Hearth a build carries.
//!
//! A phone build leaves out three parts that make no sense there: the computer (a phone has no
//! container engine, and iOS forbids starting programs), the browser (no Chromium to drive) and
//! the AG-UI endpoint (a phone serves no other programs). Each part's one door to the outside —
//! connecting to the Docker engine, launching Chromium, binding the endpoint's listener — is
//! reached only with its Cargo feature (a constant `cfg!` test at the door: the rest of the part is still
//! compiled, and left to the optimizer), so a build without it can never open that door, whatever
//! a setting, a stored row or a caller asks. Everything else of the part (its types, its tool's
//! arguments and card, its screen's commands) stays, so the tool list, the registry's exhaustive
//! match and the window are the same on every build; an operation that needs the door answers
//! with [`Part::absent`]'s words instead.

/// A part a build may leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter)]
pub enum Part {
    /// The container the agent's commands run in (feature `computer`).
    Computer,
    /// The agent's Chromium (feature `browser`).
    Browser,
    /// Hearth's AG-UI endpoint for other programs (feature `agui-server`).
    Endpoint,
}

impl Part {
    /// Whether this build carries the part.
    pub const fn is_built(self) -> bool {
        match self {
            Part::Computer => cfg!(feature = "computer"),
            Part::Browser => cfg!(feature = "browser"),
            Part::Endpoint => cfg!(feature = "agui-server"),
        }
    }

    /// What the owner (or the model) is told when an operation needs a part this build lacks:
    /// where it runs instead, and what to do.
    pub const fn absent(self) -> &'static str {
        match self {
            Part::Computer => {
                "the computer runs on your Hearth at home, not on this device (it has no container engine); \
                 use it from the desktop app"
            }
            Part::Browser => {
                "the agent's browser runs on your Hearth at home, not on this device (it has no Chromium to drive); \
                 use it from the desktop app"
            }
            Part::Endpoint => {
                "the AG-UI endpoint for other programs runs on your Hearth at home, not on this device; turn it on in \
                 the desktop app's Settings"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::IntoEnumIterator;

    #[test]
    fn the_desktop_build_carries_every_part() {
        // The test command builds the core with its default features (the desktop's): a part
        // left out of them by mistake would be caught here, before a phone-only path ships.
        for part in Part::iter() {
            assert!(part.is_built(), "{part:?} is missing from the default features");
            assert!(part.absent().contains("Hearth at home"), "{part:?}'s message says where it runs");
        }
    }
}
