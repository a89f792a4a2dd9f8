//! Why the browser did not do what was asked: the errors every part of it returns (the pages,
//! Take control, the profiles, form submissions), kept apart from Chromium itself so those
//! parts need not import the browser they serve.

use super::egress::Refusal;

/// Why the browser did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// The address is refused by the egress policy.
    #[error("{url_host}: {refusal}")]
    Refused {
        /// The host named (no path or query).
        url_host: String,
        /// Why.
        refusal: Refusal,
    },
    /// The proxy refused the page itself (a name whose answer is not public, or a redirect to
    /// a refused address); the reason is in the proxy's refusals.
    #[error("{0}: the page was refused by Hearth's egress policy (its address or a redirect is not public)")]
    RefusedByProxy(String),
    /// Not a URL.
    #[error("{0} is not a web address; give a full http:// or https:// URL")]
    BadUrl(String),
    /// Longer than `chromium::MAX_URL`.
    #[error("the address is {0} characters long; at most 4,096 are accepted")]
    UrlTooLong(usize),
    /// This build has no browser (a phone's: see [`crate::parts`]).
    #[error("{}", crate::parts::Part::Browser.absent())]
    NotInThisBuild,
    /// Chromium could not be started.
    #[error("Chromium could not be started ({0}); install Debian's chromium package or set its path in Settings → Browser")]
    Launch(String),
    /// The page did not finish in time (a look's 30 s, a script's 10 s).
    #[error("the page did not finish in time (30 s to open and read a page, 10 s to list or find an element)")]
    TimedOut,
    /// Stop.
    #[error("stopped")]
    Stopped,
    /// CDP failed.
    #[error("the browser failed: {0}")]
    Cdp(String),
    /// Not an element reference.
    #[error("{0}")]
    BadElement(String),
    /// The reference is from another page state, or names nothing now.
    #[error("{0}")]
    StaleElement(String),
    /// Three browsers are in use and none can be closed to make room.
    #[error("three browsers are busy; wait for one to finish, or close one on the Browser screen")]
    AllBusy,
    /// The owner holds control of this browser.
    #[error("busy — the owner has control of this browser; wait until they give it back")]
    OwnerHasControl,
    /// The owner's input came while they do not hold control.
    #[error("this browser is not under your control; press Take control first")]
    NotControlled,
    /// The profile was deleted while this call waited for it.
    #[error("this browser profile was deleted; ask again to start with a new one")]
    Deleted,
    /// The page's picture is larger than `chromium::MAX_PICTURE_BYTES`.
    #[error("the page's picture is {0} bytes, more than a model takes (3.5 MB); read its text with browse_web instead")]
    PictureTooLarge(usize),
    /// No page is open to picture.
    #[error("no page is open in this browser; open one with browse_web first")]
    NoPage,
    /// A task's action would send a form; the owner must review it first.
    #[error(
        "this would send the page's form to {destination} ({method}); a task sends a form only after the owner approves \
         it: call prepare_form_submission with this ref"
    )]
    NeedsReview {
        /// `GET` or `POST`.
        method: String,
        /// Where the form goes.
        destination: String,
    },
    /// The reviewed submission's page or form is no longer what the owner saw.
    #[error("the page or its form changed since it was reviewed (or the page is no longer open); prepare it again for a new review")]
    FormChanged,
    /// The form carries more than a review can show, or a request Hearth could not compare
    /// with what was shown.
    #[error("the form cannot be reviewed: {0}")]
    FormUnreviewable(String),
    /// The page did not load the reviewed form's destination when its button was pressed
    /// (within 10 s): it can no longer go that way, but the page may have sent it otherwise.
    #[error(
        "the page did not load the form's destination within 10 s of the press (a check or a script of the page may have \
         stopped it, or sent the fields another way); check the site before sending it again"
    )]
    FormNotSent,
    /// The reviewed form's request carried other fields than the owner approved (the page
    /// changed them after the check): held back.
    #[error(
        "the page changed the form between the check and the send (its request carried other fields than you approved), so \
         Hearth held that request back; the page may still have sent the fields another way — check the site"
    )]
    FormDiffered,
    /// The page's script failed while Hearth asked what the gesture would send.
    #[error("Hearth cannot tell what this would send (the page's form could not be read), so a task does not press it")]
    UnknownSubmission,
    /// The element and gesture send no form.
    #[error("{0} sends no form with that gesture; use page_act for it")]
    NotASubmission(String),
    /// Twenty profiles are saved, and each is the owner's own or in use.
    #[error(
        "twenty browser profiles are saved and each is yours or in use; delete one on the Browser screen (it takes its logins with it) to open another"
    )]
    TooManyProfiles,
}

impl From<chromiumoxide::error::CdpError> for BrowserError {
    fn from(err: chromiumoxide::error::CdpError) -> Self {
        BrowserError::Cdp(err.to_string())
    }
}

/// What page_act did not do, or may have done.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    /// Nothing was sent to the page (refused, stale reference, Stop before the input).
    #[error("{0}")]
    NotDone(BrowserError),
    /// The input was sent, or may have been, and then something failed (Stop, a dead browser):
    /// the page may have acted on it.
    #[error("{0}")]
    MayHaveDone(String),
}
