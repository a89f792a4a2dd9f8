//! The open page's interactive elements and the actions on them.
//!
//! An element's reference is `<state>:<index>`: its place in a fixed, document-order listing
//! of the page's visible interactive elements, and a hash of that listing (the page's address
//! and each element's role and name, not the values typed into fields). Before any action the
//! listing is made again in the same round trip that finds the element: a page that changed
//! since page_elements gives another state, and the old reference is refused instead of
//! acting on whatever now sits at that index. A click is sent only when the element itself is
//! what the point reaches (nothing covers it), and keys only when it has the keyboard.
//!
//! Limit: the scripts run in the page's own JavaScript world, so a hostile page can lie about
//! its listing (it can change what it shows anyway); the references protect against a page that
//! changed, not one that deceives. An isolated world would close that gap.

use sha2::Digest;

use hearth_protocol::browser::{MAX_ELEMENTS, PageElement};

/// The listing, as a function of the page's own document: which elements count and how each
/// is described. Shared by [`LIST`] and [`LOCATE`] so the two can never list differently.
const ENUMERATE: &str = r#"
function hearthElements() {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, ' +
    '[role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=menuitem], ' +
    '[role=switch], [role=option], [contenteditable=""], [contenteditable=true]';
  const out = [];
  for (const el of document.querySelectorAll(selector)) {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (box.width <= 0 || box.height <= 0 || style.visibility === 'hidden' || style.display === 'none') continue;
    if (el.disabled) continue;
    out.push(el);
  }
  return out;
}
function hearthRole(el) {
  const role = el.getAttribute('role');
  if (role) return role.slice(0, 40);
  const tag = el.tagName.toLowerCase();
  if (tag === 'a') return 'link';
  if (tag === 'button' || tag === 'summary') return 'button';
  if (tag === 'select') return 'combobox';
  if (tag === 'textarea') return 'textbox';
  if (tag === 'input') {
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
    if (type === 'checkbox' || type === 'radio') return type;
    return 'textbox';
  }
  return el.isContentEditable ? 'textbox' : tag;
}
function hearthLabel(el) {
  if (!el.labels || !el.labels[0]) return '';
  // The label's own words: a control inside it (a select's options, say) is not its name.
  const label = el.labels[0].cloneNode(true);
  label.querySelectorAll('input, select, textarea, button').forEach(n => n.remove());
  return label.textContent;
}
function hearthName(el) {
  const label = el.getAttribute('aria-label') || hearthLabel(el) ||
    el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name') ||
    (el.tagName === 'INPUT' ? (['button', 'submit', 'reset'].includes(el.type) ? el.value : '') : el.innerText) || '';
  return label.replace(/\s+/g, ' ').trim().slice(0, 120);
}
function hearthIsSubmitter(n) {
  if (!n || !n.tagName) return false;
  const t = String(n.type || '').toLowerCase();
  return (n.tagName === 'BUTTON' && t === 'submit') || (n.tagName === 'INPUT' && (t === 'submit' || t === 'image'));
}
function hearthDeepest(x, y) {
  // What a click at (x, y) reaches, through open shadow roots.
  let at = document.elementFromPoint(x, y);
  while (at && at.shadowRoot) { const inner = at.shadowRoot.elementFromPoint(x, y); if (!inner || inner === at) break; at = inner; }
  return at;
}
function hearthFormGet(form, key) {
  // Through the prototype: a field named "action" or "elements" cannot stand in for the form's own.
  return Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, key).get.call(form);
}
function hearthSubmission(el, gesture, at) {
  // What `gesture` on `el` would send off the page: a form's submission, null, or 'unknown'
  // when the page cannot be read. A click counts what it lands on (`at`, the deepest element
  // under the point) up to the listed element: a wrapper around a submit button, a label for
  // one. Enter submits implicitly through the form's default button (its first submit
  // button, whose name and formaction then apply); counted as a submission even where no
  // button would let it (asking for a review that was not needed is the safe mistake).
  if (!gesture) return null;
  try {
    let submitter = null, form = null;
    if (gesture === 'click' || gesture === 'space') {
      // The element a click activates is the first on its way up (through shadow hosts) that
      // has an activation of its own — a submit button, a label (whose control it then
      // activates), another button, a link — wherever the listed element stands on that way.
      let n = gesture === 'click' && at ? at : el;
      while (n) {
        if (hearthIsSubmitter(n)) { submitter = n; break; }
        if (n.tagName === 'LABEL') { if (hearthIsSubmitter(n.control)) submitter = n.control; break; }
        if (['A', 'AREA', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'SUMMARY'].includes(n.tagName)) break;
        n = n.parentElement || (n.parentNode && n.parentNode.host) || null;
      }
      if (!submitter) return null;
      form = submitter.form;
    } else if (gesture === 'enter') {
      const type = String(el.type || '').toLowerCase();
      if (hearthIsSubmitter(el)) { submitter = el; form = el.form; }
      else if ((el.tagName === 'INPUT' && !['button', 'reset', 'file', 'color'].includes(type)) || el.tagName === 'SELECT') {
        form = el.form;
        if (!form) return null;
        submitter = Array.from(hearthFormGet(form, 'elements')).find(hearthIsSubmitter) || null;
        if (submitter && submitter.disabled) return null;
      } else return null;
    } else return null;
    if (!form) return null;
    const own = (key) => !!submitter && submitter.hasAttribute('form' + key);
    const method = String(own('method') ? submitter.formMethod : hearthFormGet(form, 'method')).toLowerCase();
    if (method === 'dialog') return null;
    const action = String(own('action') ? submitter.formAction : hearthFormGet(form, 'action'));
    const enctype = String(own('enctype') ? submitter.formEnctype : hearthFormGet(form, 'enctype'));
    const image = !!submitter && String(submitter.type).toLowerCase() === 'image';
    const data = submitter && !image ? new FormData(form, submitter) : new FormData(form);
    const controls = Array.from(hearthFormGet(form, 'elements'));
    // A name any secret control of the form carries is hidden wherever it appears.
    const secret = new Set(controls.filter(c => String(c.type || '').toLowerCase() === 'password' ||
      /(^|\s)(cc-number|cc-csc|one-time-code|new-password|current-password)(\s|$)/.test(String(c.getAttribute('autocomplete') || ''))).map(c => c.name));
    const fields = [];
    for (const [name, value] of data) {
      const control = controls.find(c => c.name === name);
      const file = typeof value !== 'string';
      fields.push([name, control ? hearthName(control) : '', file ? String(value.name) : value, secret.has(name), file]);
    }
    if (image) {
      const n = submitter.name ? submitter.name + '.' : '';
      fields.push([n + 'x', hearthName(submitter), '(where it is clicked)', false, false], [n + 'y', hearthName(submitter), '(where it is clicked)', false, false]);
    }
    return [method.toUpperCase(), action, enctype, fields, image];
  } catch (e) {
    return 'unknown';
  }
}
function hearthValue(el) {
  if (el.tagName === 'A') return el.href.slice(0, 500);
  if ('value' in el && el.tagName !== 'BUTTON') return String(el.value).slice(0, 500);
  return null;
}
"#;

/// Lists the page: `[href, title, [[role, name, value], …], total]`.
pub(super) fn list_script() -> String {
    format!(
        "(() => {{ {ENUMERATE} const els = hearthElements(); \
         return [location.href.slice(0, 8192), document.title.slice(0, 600), \
         els.slice(0, {MAX_ELEMENTS}).map(el => [hearthRole(el), hearthName(el), hearthValue(el)]), els.length]; }})()"
    )
}

/// Lists the page again and, when element `index` is there, scrolls it to the middle of the
/// viewport at once (never smoothly: the box is measured after the scroll) and, for `focus`,
/// focuses it: `[href, [[role, name, value], …], centre x, centre y, hit, focused, sends]`,
/// the centre being -1 when there is no such element, `hit` whether the element itself (or
/// one inside it) is what a click at the centre would reach, `focused` whether it now has the
/// keyboard, and `sends` what `gesture` would submit (as [`submission_script`] says).
pub(super) fn locate_script(index: usize, focus: bool, gesture: Option<&str>) -> Result<String, serde_json::Error> {
    let gesture = serde_json::to_string(&gesture)?;
    Ok(format!(
        "(() => {{ {ENUMERATE} const els = hearthElements(); const el = els[{index}]; let x = -1, y = -1, hit = false, focused = false, sends = null; \
         if (el && {index} < {MAX_ELEMENTS}) {{ el.scrollIntoView({{block: 'center', inline: 'center', behavior: 'instant'}}); \
         if ({focus}) el.focus(); const b = el.getBoundingClientRect(); x = b.x + b.width / 2; y = b.y + b.height / 2; \
         const at = document.elementFromPoint(x, y); hit = !!at && (at === el || el.contains(at)); \
         focused = document.activeElement === el; sends = hearthSubmission(el, {gesture}, hearthDeepest(x, y)); }} \
         return [location.href.slice(0, 8192), \
         els.slice(0, {MAX_ELEMENTS}).map(el => [hearthRole(el), hearthName(el), hearthValue(el)]), x, y, hit, focused, sends]; }})()"
    ))
}

/// The page and what `gesture` on element `index` would submit, with nothing pressed or
/// focused (the element is scrolled into view, as an action would, so a click is judged where
/// it would land): `[href, title, [[role, name, value], …], submission]`, the submission being
/// `[method, action, enctype, [[name, label, value, hidden, file], …]]`, `'unknown'` or null.
pub(super) fn submission_script(index: usize, gesture: &str) -> Result<String, serde_json::Error> {
    let gesture = serde_json::to_string(gesture)?;
    Ok(format!(
        "(() => {{ {ENUMERATE} const els = hearthElements(); const el = els[{index}]; let sends = null; \
         if (el && {index} < {MAX_ELEMENTS}) {{ el.scrollIntoView({{block: 'center', inline: 'center', behavior: 'instant'}}); \
         const b = el.getBoundingClientRect(); sends = hearthSubmission(el, {gesture}, hearthDeepest(b.x + b.width / 2, b.y + b.height / 2)); }} \
         return [location.href.slice(0, 8192), document.title.slice(0, 600), \
         els.slice(0, {MAX_ELEMENTS}).map(el => [hearthRole(el), hearthName(el), hearthValue(el)]), sends]; }})()"
    ))
}

/// Picks the option of element `index` (a `<select>`) whose value or label is `value`, and
/// tells the page as a person's choice would (input and change events). Answers whether one
/// matched.
pub(super) fn select_script(index: usize, value: &str) -> Result<String, serde_json::Error> {
    let wanted = serde_json::to_string(value)?;
    Ok(format!(
        "(() => {{ {ENUMERATE} const el = hearthElements()[{index}]; if (!el || el.tagName !== 'SELECT') return false; \
         const wanted = {wanted}; const option = Array.from(el.options).find(o => o.value === wanted || o.label.trim() === wanted); \
         if (!option) return false; el.value = option.value; \
         el.dispatchEvent(new Event('input', {{bubbles: true}})); el.dispatchEvent(new Event('change', {{bubbles: true}})); \
         return true; }})()"
    ))
}

/// One listed element as the page described it.
pub(super) type Described = (String, String, Option<String>);

/// The state of a listing: the page's address, each element's role and name, and a link's
/// address (what the page sets itself; a field's typed value is left out, so typing keeps the
/// references).
pub(super) fn state_of(url: &str, described: &[Described]) -> String {
    let mut hash = sha2::Sha256::new();
    hash.update(url.as_bytes());
    for (role, name, value) in described {
        hash.update([0]);
        hash.update(role.as_bytes());
        hash.update([1]);
        hash.update(name.as_bytes());
        if role == "link" {
            hash.update([2]);
            hash.update(value.as_deref().unwrap_or_default().as_bytes());
        }
    }
    hex::encode(hash.finalize())[..12].to_owned()
}

/// The listing as page_elements returns it.
pub(super) fn elements_of(state: &str, described: Vec<Described>) -> Vec<PageElement> {
    described
        .into_iter()
        .enumerate()
        .map(|(index, (role, name, value))| PageElement { reference: format!("{state}:{index}"), role, name, value })
        .collect()
}

/// A reference split into its state and index, or why it is not one.
pub fn parse_reference(reference: &str) -> Result<(&str, usize), String> {
    let bad = || format!("{reference:?} is not an element reference; use a `ref` page_elements gave");
    let (state, index) = reference.split_once(':').ok_or_else(bad)?;
    if state.len() != 12 || !state.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let index: usize = index.parse().map_err(|_| bad())?;
    if index >= MAX_ELEMENTS {
        return Err(bad());
    }
    Ok((state, index))
}

/// A key page_act can press: its DOM `key`, `code`, Windows key code and the text it types.
pub(super) struct Key {
    pub key: &'static str,
    pub code: &'static str,
    pub key_code: i64,
    pub text: Option<&'static str>,
}

/// The keys page_act presses (anything else is refused with this list).
pub const KEYS: &[&str] = &[
    "Enter",
    "Tab",
    "Escape",
    "Backspace",
    "Delete",
    "Space",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "Home",
    "End",
    "PageUp",
    "PageDown",
];

/// Whether page_act can press `name`.
pub fn is_key(name: &str) -> bool {
    key(name).is_some()
}

pub(super) fn key(name: &str) -> Option<Key> {
    let key = |key, code, key_code, text| Key { key, code, key_code, text };
    Some(match name {
        "Enter" => key("Enter", "Enter", 13, Some("\r")),
        "Tab" => key("Tab", "Tab", 9, None),
        "Escape" => key("Escape", "Escape", 27, None),
        "Backspace" => key("Backspace", "Backspace", 8, None),
        "Delete" => key("Delete", "Delete", 46, None),
        "Space" => key(" ", "Space", 32, Some(" ")),
        "ArrowUp" => key("ArrowUp", "ArrowUp", 38, None),
        "ArrowDown" => key("ArrowDown", "ArrowDown", 40, None),
        "ArrowLeft" => key("ArrowLeft", "ArrowLeft", 37, None),
        "ArrowRight" => key("ArrowRight", "ArrowRight", 39, None),
        "Home" => key("Home", "Home", 36, None),
        "End" => key("End", "End", 35, None),
        "PageUp" => key("PageUp", "PageUp", 33, None),
        "PageDown" => key("PageDown", "PageDown", 34, None),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_state_covers_the_address_roles_and_names_but_not_values() {
        let listing = vec![("button".to_owned(), "Add".to_owned(), None), ("textbox".to_owned(), "Name".to_owned(), Some("a".into()))];
        let state = state_of("http://a.example/", &listing);
        let mut typed = listing.clone();
        typed[1].2 = Some("ab".into());
        assert_eq!(state_of("http://a.example/", &typed), state, "typing into a field keeps the references");
        let mut relinked = vec![("link".to_owned(), "Read more".to_owned(), Some("http://a.example/1".to_owned()))];
        let first = state_of("http://a.example/", &relinked);
        relinked[0].2 = Some("http://a.example/2".into());
        assert_ne!(state_of("http://a.example/", &relinked), first, "a link to elsewhere is another element");
        let mut renamed = listing.clone();
        renamed[0].1 = "Add (1)".into();
        assert_ne!(state_of("http://a.example/", &renamed), state);
        assert_ne!(state_of("http://b.example/", &listing), state);
        // Role and name are separated: ("ab","c") and ("a","bc") differ.
        let a = vec![("ab".to_owned(), "c".to_owned(), None)];
        let b = vec![("a".to_owned(), "bc".to_owned(), None)];
        assert_ne!(state_of("u", &a), state_of("u", &b));
    }

    #[test]
    fn references_parse_only_in_their_own_shape() {
        let state = state_of("u", &[]);
        assert_eq!(parse_reference(&format!("{state}:7")).unwrap(), (state.as_str(), 7));
        for bad in ["7", ":7", "abc:7", &format!("{state}:x"), &format!("{state}:-1"), &format!("{state}:{MAX_ELEMENTS}"), "zzzzzzzzzzzz:1"]
        {
            assert!(parse_reference(bad).is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn every_listed_key_is_known() {
        for name in KEYS {
            assert!(key(name).is_some(), "{name}");
        }
        assert!(key("F13").is_none());
    }
}
