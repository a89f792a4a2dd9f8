//! Appearance streams for text, combo-box and list-box widgets, made as a viewer makes them
//! from the field's default appearance (/DA): its font (from the form's /DR, or the widget's
//! old appearance), size (0 = fit the box) and colour.
//!
//! - Box: the widget's /MK background and border colours, its /BS (or /Border) width and
//!   style (solid, dashed, underline).
//! - Text: inside the border and 2 pt of padding, clipped to the inside of the border.
//!   One line: left, centred or right per /Q, centred vertically. Multi-line: wrapped on
//!   spaces (a word longer than a line breaks between characters), line breaks kept,
//!   from the top, 1.15 × the font size apart. Comb: one character centred in each of /MaxLen
//!   cells.
//! - List box: one option per row from the top, the chosen one on a light-blue band
//!   (scrolled into view).
//!
//! Only simple fonts whose encoding and widths are known here are used: /Encoding
//! WinAnsiEncoding or StandardEncoding, optionally with /Differences, and /Widths, or none
//! for standard Helvetica (its AFM widths are in `metrics`). A composite, symbolic, subset or
//! otherwise unknown font, a character the font cannot show, an unknown /DA operator, a
//! rotated widget or a beveled or inset border is `Unsupported`: the caller then leaves the
//! document to PDFium's form filler.

use std::fmt::Write as _;

use lopdf::{Dictionary, Document, Object};

use super::metrics::{self, GLYPHS, NONE, STANDARD, WIN_ANSI};
use super::objects::{get, get_dict, number, resolve};

/// Why the direct path hands a document to PDFium (for logs and tests; never a value).
pub(super) type Unsupported = &'static str;

const PADDING: f64 = 2.0;
/// Leading of wrapped lines and list rows, in font sizes.
const LINE_FACTOR: f64 = 1.15;
/// Bounds of an automatic (size 0) font size.
const AUTO_MIN: f64 = 4.0;
const AUTO_MAX: f64 = 144.0;
/// An automatic multi-line size starts here and shrinks until the text fits.
const AUTO_MULTILINE_START: f64 = 12.0;
/// The selected row of a list box (the highlight viewers use).
const HIGHLIGHT: &str = "0.6 0.75 0.85 rg";

/// A simple font, as far as laying out text in it needs.
pub(super) struct Font {
    /// Per code: the character it shows and its advance width (1/1000 em).
    codes: [Option<(char, f64)>; 256],
    ascent: f64,
    descent: f64,
}

impl Font {
    /// Standard Helvetica in WinAnsiEncoding, for a /DA naming Helv or Helvetica that no
    /// resource defines.
    pub(super) fn helvetica() -> Self {
        let mut codes = [None; 256];
        for (code, &glyph) in WIN_ANSI.iter().enumerate() {
            if let Some(&(_, c, width)) = GLYPHS.get(usize::from(glyph)) {
                codes[code] = Some((c, f64::from(width)));
            }
        }
        Self { codes, ascent: metrics::HELVETICA_ASCENT, descent: metrics::HELVETICA_DESCENT }
    }

    /// The font dictionary `dict`, if it is a simple font this module can measure and encode.
    pub(super) fn from_dict(doc: &Document, dict: &Dictionary) -> Result<Self, Unsupported> {
        let name = |key: &[u8]| get(doc, dict, key).and_then(|n| n.as_name().ok());
        match name(b"Subtype") {
            Some(b"Type1" | b"MMType1" | b"TrueType") => {}
            _ => return Err("a composite, Type 3 or unknown font"),
        }
        let base = name(b"BaseFont").unwrap_or_default();
        if base.len() > 7 && base[6] == b'+' && base[..6].iter().all(u8::is_ascii_uppercase) {
            return Err("a subset font (it may lack the glyphs)");
        }
        let descriptor = get_dict(doc, dict, b"FontDescriptor");
        let num_in = |d: &Dictionary, key: &[u8]| get(doc, d, key).and_then(number);
        if let Some(d) = descriptor {
            let flags = num_in(d, b"Flags").unwrap_or(32.0) as i64;
            if flags & 4 != 0 {
                return Err("a symbolic font");
            }
        }
        let embedded = descriptor.is_some_and(|d| [&b"FontFile"[..], b"FontFile2", b"FontFile3"].iter().any(|k| d.has(k)));
        let is_type1 = name(b"Subtype") != Some(b"TrueType");
        // The encoding when the font names no base encoding: a non-embedded Type 1 font's
        // built-in encoding is StandardEncoding; anything else is the font program's own.
        let builtin = || if is_type1 && !embedded { Ok(&STANDARD) } else { Err("a font with its own built-in encoding") };
        let named = |n: &[u8]| match n {
            b"WinAnsiEncoding" => Ok(&WIN_ANSI),
            b"StandardEncoding" => Ok(&STANDARD),
            _ => Err("an encoding other than WinAnsi or Standard"),
        };
        let (table, differences) = match get(doc, dict, b"Encoding") {
            None => (builtin()?, None),
            Some(Object::Name(n)) => (named(n)?, None),
            Some(Object::Dictionary(e)) => {
                let base = match get(doc, e, b"BaseEncoding") {
                    None => builtin()?,
                    Some(Object::Name(n)) => named(n)?,
                    Some(_) => return Err("an unreadable encoding"),
                };
                let differences = match get(doc, e, b"Differences") {
                    None => None,
                    Some(Object::Array(items)) => Some(items),
                    Some(_) => return Err("an unreadable encoding"),
                };
                (base, differences)
            }
            Some(_) => return Err("an unreadable encoding"),
        };
        // code → (character, glyph index in GLYPHS if Helvetica has it)
        let mut glyphs: [Option<(char, Option<u16>)>; 256] = [None; 256];
        for (code, &glyph) in table.iter().enumerate() {
            if glyph != NONE
                && let Some(&(_, c, _)) = GLYPHS.get(usize::from(glyph))
            {
                glyphs[code] = Some((c, Some(glyph)));
            }
        }
        if let Some(items) = differences {
            let mut code: Option<usize> = None;
            for item in items {
                match item {
                    Object::Integer(n) => code = Some(usize::try_from(*n).map_err(|_| "an unreadable encoding")?),
                    Object::Name(n) => {
                        let at = code.ok_or("an unreadable encoding")?;
                        if at > 255 {
                            return Err("an unreadable encoding");
                        }
                        glyphs[at] = glyph_named(n);
                        code = Some(at + 1);
                    }
                    _ => return Err("an unreadable encoding"),
                }
            }
        }
        let widths = match get(doc, dict, b"Widths") {
            Some(Object::Array(items)) => {
                let first = get(doc, dict, b"FirstChar").and_then(number).unwrap_or(0.0);
                let missing = descriptor.and_then(|d| num_in(d, b"MissingWidth")).unwrap_or(0.0);
                let values: Vec<f64> =
                    items.iter().map(|i| resolve(doc, i).and_then(number)).collect::<Option<_>>().ok_or("unreadable /Widths")?;
                Some((first as i64, values, missing))
            }
            Some(_) => return Err("unreadable /Widths"),
            None if base == b"Helvetica" => None,
            None => return Err("a font without /Widths other than standard Helvetica"),
        };
        let mut codes = [None; 256];
        for (code, glyph) in glyphs.iter().enumerate() {
            let Some((c, index)) = *glyph else { continue };
            let width = match &widths {
                Some((first, values, missing)) => {
                    let at = (code as i64).checked_sub(*first).and_then(|i| usize::try_from(i).ok());
                    Some(at.and_then(|i| values.get(i).copied()).unwrap_or(*missing))
                }
                None => index.and_then(|i| GLYPHS.get(usize::from(i))).map(|g| f64::from(g.2)),
            };
            codes[code] = width.map(|w| (c, w));
        }
        let (mut ascent, mut descent) = (metrics::HELVETICA_ASCENT, metrics::HELVETICA_DESCENT);
        if let Some(d) = descriptor
            && let (Some(a), Some(b)) = (num_in(d, b"Ascent"), num_in(d, b"Descent"))
            && a > 0.0
            && b <= 0.0
        {
            (ascent, descent) = (a, b);
        }
        Ok(Self { codes, ascent, descent })
    }

    /// The code showing `c`, if the font has one.
    fn code(&self, c: char) -> Option<u8> {
        let find = |c: char| {
            if c.is_ascii()
                && let Some(Some((shown, _))) = self.codes.get(c as usize)
                && *shown == c
            {
                return u8::try_from(c as u32).ok();
            }
            self.codes.iter().position(|e| e.is_some_and(|(shown, _)| shown == c)).and_then(|i| u8::try_from(i).ok())
        };
        find(c).or_else(|| {
            // Characters the Latin encodings show with another character's glyph.
            let alias = match c {
                '\u{A0}' => ' ',
                '\u{AD}' => '-',
                '\u{2215}' => '\u{2044}',
                '\u{2C9}' => '\u{AF}',
                '\u{3BC}' => '\u{B5}',
                _ => return None,
            };
            find(alias)
        })
    }

    /// `text` in the font's codes, or `None` when a character has none.
    pub(super) fn encode(&self, text: &str) -> Option<Vec<u8>> {
        text.chars().map(|c| self.code(c)).collect()
    }

    /// Width of `codes` in 1/1000 em.
    fn units(&self, codes: &[u8]) -> f64 {
        codes.iter().map(|&c| self.width(c)).sum()
    }

    fn width(&self, code: u8) -> f64 {
        self.codes[usize::from(code)].map_or(0.0, |(_, w)| w)
    }

    /// Height of a line box (ascent − descent) in 1/1000 em.
    fn box_units(&self) -> f64 {
        self.ascent - self.descent
    }
}

/// A glyph name from /Differences: Helvetica's Latin glyphs, or `uniXXXX`.
fn glyph_named(name: &[u8]) -> Option<(char, Option<u16>)> {
    if let Some(index) = metrics::glyph_index(name) {
        return GLYPHS.get(usize::from(index)).map(|g| (g.1, Some(index)));
    }
    let hex = name.strip_prefix(b"uni").filter(|h| h.len() == 4)?;
    let code = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
    char::from_u32(code).map(|c| (c, None))
}

/// A default appearance string: the font resource, size and fill colour of the text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Da {
    /// The font's resource name, as written (without the slash).
    pub(super) font: Vec<u8>,
    /// 0 = automatic.
    pub(super) size: f64,
    /// The colour operator, e.g. `0 0 0 rg`, or empty.
    colour: String,
}

/// Parses a /DA string (`/Helv 12 Tf 0 g`).
pub(super) fn parse_da(da: &[u8]) -> Result<Da, Unsupported> {
    const UNKNOWN: Unsupported = "a /DA with operators other than a font and colour";
    let mut operands: Vec<&[u8]> = Vec::new();
    let mut font: Option<(Vec<u8>, f64)> = None;
    let mut colour = String::new();
    let mut i = 0;
    while i < da.len() {
        let b = da[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < da.len() && !da[i].is_ascii_whitespace() && !matches!(da[i], b'/' | b'[' | b'(' | b'<') {
            i += 1;
        }
        let token = &da[start..i];
        if token.starts_with(b"/") || token[0].is_ascii_digit() || matches!(token[0], b'-' | b'+' | b'.') {
            operands.push(token);
            continue;
        }
        let numbers: Option<Vec<f64>> = operands.iter().map(|t| std::str::from_utf8(t).ok().and_then(|s| s.parse::<f64>().ok())).collect();
        match token {
            b"Tf" => {
                let [name, size] = operands[..] else { return Err(UNKNOWN) };
                let name = name.strip_prefix(b"/").filter(|n| !n.is_empty()).ok_or(UNKNOWN)?;
                let size: f64 = std::str::from_utf8(size).ok().and_then(|s| s.parse().ok()).ok_or(UNKNOWN)?;
                if !size.is_finite() || size < 0.0 {
                    return Err(UNKNOWN);
                }
                font = Some((name.to_vec(), size));
            }
            b"g" | b"rg" | b"k" => {
                let numbers = numbers.ok_or(UNKNOWN)?;
                let wanted = match token {
                    b"g" => 1,
                    b"rg" => 3,
                    _ => 4,
                };
                if numbers.len() != wanted {
                    return Err(UNKNOWN);
                }
                colour = numbers.iter().map(|&n| fmt(n)).collect::<Vec<_>>().join(" ");
                colour.push(' ');
                colour.push_str(std::str::from_utf8(token).map_err(|_| UNKNOWN)?);
            }
            // Stroke colours do not affect text shown with the default rendering mode.
            b"G" | b"RG" | b"K" => {}
            _ => return Err(UNKNOWN),
        }
        operands.clear();
    }
    let (font, size) = font.ok_or("a /DA without a font")?;
    Ok(Da { font, size, colour })
}

/// A colour from an /MK array (gray, RGB or CMYK); `None` for an empty array (transparent).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Colour(Vec<f64>);

impl Colour {
    fn read(doc: &Document, value: &Object) -> Result<Option<Self>, Unsupported> {
        let Some(Object::Array(items)) = resolve(doc, value) else { return Err("an unreadable /MK colour") };
        let comps: Vec<f64> =
            items.iter().map(|i| resolve(doc, i).and_then(number)).collect::<Option<_>>().ok_or("an unreadable /MK colour")?;
        match comps.len() {
            0 => Ok(None),
            1 | 3 | 4 => Ok(Some(Self(comps))),
            _ => Err("an unreadable /MK colour"),
        }
    }

    fn op(&self, stroke: bool) -> String {
        let mut out: String = self.0.iter().map(|&n| fmt(n) + " ").collect();
        out.push_str(match (self.0.len(), stroke) {
            (1, false) => "g",
            (1, true) => "G",
            (3, false) => "rg",
            (3, true) => "RG",
            (_, false) => "k",
            (_, true) => "K",
        });
        out
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Style {
    Solid,
    Dashed(Vec<f64>),
    Underline,
}

/// The widget's box: size, background and border.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Look {
    pub(super) width: f64,
    pub(super) height: f64,
    background: Option<Colour>,
    /// Colour, width, style.
    border: Option<(Colour, f64, Style)>,
}

/// The box of widget `widget` (/Rect, /MK, /BS, /Border).
pub(super) fn look(doc: &Document, widget: &Dictionary) -> Result<Look, Unsupported> {
    let numbers = |value: Option<&Object>| -> Option<Vec<f64>> {
        match resolve(doc, value?)? {
            Object::Array(items) => items.iter().map(|i| resolve(doc, i).and_then(number)).collect(),
            _ => None,
        }
    };
    let rect = numbers(widget.get(b"Rect").ok()).filter(|r| r.len() == 4).ok_or("a widget without a /Rect")?;
    let (width, height) = ((rect[2] - rect[0]).abs(), (rect[3] - rect[1]).abs());
    if width < 1.0 || height < 1.0 {
        return Err("a widget without an area");
    }
    let mk = get_dict(doc, widget, b"MK");
    let (mut background, mut border_colour) = (None, None);
    if let Some(mk) = mk {
        if get(doc, mk, b"R").and_then(number).is_some_and(|r| r % 360.0 != 0.0) {
            return Err("a rotated widget");
        }
        if let Ok(bg) = mk.get(b"BG") {
            background = Colour::read(doc, bg)?;
        }
        if let Ok(bc) = mk.get(b"BC") {
            border_colour = Colour::read(doc, bc)?;
        }
    }
    let bs = get_dict(doc, widget, b"BS");
    let width_of_border = match bs {
        Some(bs) => get(doc, bs, b"W").and_then(number).unwrap_or(1.0),
        None => numbers(widget.get(b"Border").ok()).and_then(|b| b.get(2).copied()).unwrap_or(1.0),
    };
    let style = match bs.and_then(|bs| get(doc, bs, b"S")) {
        None => Style::Solid,
        Some(Object::Name(s)) => match s.as_slice() {
            b"S" => Style::Solid,
            b"D" => {
                let dash = bs.and_then(|bs| numbers(bs.get(b"D").ok())).unwrap_or_else(|| vec![3.0]);
                Style::Dashed(dash)
            }
            b"U" => Style::Underline,
            _ => return Err("a beveled, inset or unknown border style"),
        },
        Some(_) => return Err("an unreadable border style"),
    };
    let border = border_colour.filter(|_| width_of_border > 0.0).map(|c| (c, width_of_border, style));
    Ok(Look { width, height, background, border })
}

/// What a widget shows.
pub(super) enum Content<'t> {
    /// `align`: /Q (0 left, 1 centre, 2 right). `comb`: /MaxLen cells.
    Text {
        text: &'t str,
        multiline: bool,
        comb: Option<usize>,
        align: i64,
    },
    List {
        options: &'t [String],
        selected: Option<usize>,
    },
}

/// The content stream of a widget's normal appearance (its form XObject is `look.width` ×
/// `look.height`, origin at the lower left).
pub(super) fn stream(look: &Look, da: &Da, font: &Font, content: &Content<'_>) -> Result<Vec<u8>, Unsupported> {
    let (w, h) = (look.width, look.height);
    let mut out = String::with_capacity(512);
    if let Some(bg) = &look.background {
        let _ = writeln!(out, "q {} 0 0 {} {} re f Q", bg.op(false), fmt(w), fmt(h));
    }
    let mut inset = 0.0;
    if let Some((colour, bw, style)) = &look.border {
        inset = *bw;
        let _ = write!(out, "q {} {} w ", colour.op(true), fmt(*bw));
        match style {
            Style::Solid => {}
            Style::Dashed(dash) => {
                let _ = write!(out, "[{}] 0 d ", dash.iter().map(|&d| fmt(d)).collect::<Vec<_>>().join(" "));
            }
            Style::Underline => {}
        }
        if *style == Style::Underline {
            let _ = writeln!(out, "0 {y} m {} {y} l S Q", fmt(w), y = fmt(bw / 2.0));
        } else {
            let _ = writeln!(out, "{o} {o} {} {} re S Q", fmt(w - bw), fmt(h - bw), o = fmt(bw / 2.0));
        }
    }
    let _ =
        writeln!(out, "/Tx BMC\nq\n{i} {i} {} {} re W n", fmt((w - 2.0 * inset).max(0.0)), fmt((h - 2.0 * inset).max(0.0)), i = fmt(inset));
    let font_name = String::from_utf8_lossy(&da.font).into_owned();
    let begin = |out: &mut String, size: f64| {
        let _ = write!(out, "BT\n{}{}/{} {} Tf\n", da.colour, if da.colour.is_empty() { "" } else { "\n" }, font_name, fmt(size));
    };
    let inner = inset + PADDING;
    let (avail_w, avail_h) = ((w - 2.0 * inner).max(0.0), (h - 2.0 * inner).max(0.0));
    let box_h = font.box_units() / 1000.0;
    let ascent = font.ascent / 1000.0;
    let descent = font.descent / 1000.0;
    match content {
        Content::Text { text, multiline: false, comb: None, align } | Content::Text { text, multiline: false, comb: Some(0), align } => {
            let codes = font.encode(text).ok_or("a character its font cannot show")?;
            let units = font.units(&codes) / 1000.0;
            let size = if da.size > 0.0 {
                da.size
            } else {
                let by_width = if units > 0.0 { avail_w / units } else { AUTO_MAX };
                (avail_h / box_h).min(by_width).clamp(AUTO_MIN, AUTO_MAX)
            };
            let y = (h - box_h * size) / 2.0 - descent * size;
            if !codes.is_empty() {
                begin(&mut out, size);
                let x = aligned(inner, avail_w, units * size, *align);
                let _ = writeln!(out, "{} {} Td {} Tj\nET", fmt(x), fmt(y), hex(&codes));
            }
        }
        Content::Text { text, multiline: false, comb: Some(cells), .. } => {
            let codes = font.encode(text).ok_or("a character its font cannot show")?;
            let cell = (w - 2.0 * inset) / *cells as f64;
            let widest = codes.iter().map(|&c| font.width(c)).fold(0.0, f64::max) / 1000.0;
            let size = if da.size > 0.0 {
                da.size
            } else {
                let by_width = if widest > 0.0 { (cell - 2.0 * PADDING).max(0.0) / widest } else { AUTO_MAX };
                (avail_h / box_h).min(by_width).clamp(AUTO_MIN, AUTO_MAX)
            };
            let y = (h - box_h * size) / 2.0 - descent * size;
            if !codes.is_empty() {
                begin(&mut out, size);
                for (i, &code) in codes.iter().enumerate() {
                    let x = inset + cell * i as f64 + (cell - font.width(code) / 1000.0 * size) / 2.0;
                    let _ = writeln!(out, "1 0 0 1 {} {} Tm {} Tj", fmt(x), fmt(y), hex(&[code]));
                }
                out.push_str("ET\n");
            }
        }
        Content::Text { text, multiline: true, align, .. } => {
            let paragraphs: Vec<Vec<u8>> =
                split_lines(text).map(|p| font.encode(p).ok_or("a character its font cannot show")).collect::<Result<_, _>>()?;
            let layout = |size: f64| -> Vec<Vec<u8>> { paragraphs.iter().flat_map(|p| wrap(font, p, avail_w / size * 1000.0)).collect() };
            let (size, lines) = if da.size > 0.0 {
                (da.size, layout(da.size))
            } else {
                let mut size = AUTO_MULTILINE_START;
                loop {
                    let lines = layout(size);
                    if lines.len() as f64 * size * LINE_FACTOR <= avail_h || size <= AUTO_MIN {
                        break (size, lines);
                    }
                    size -= 0.5;
                }
            };
            if lines.iter().any(|l| !l.is_empty()) {
                begin(&mut out, size);
                let first = h - inner - ascent * size;
                for (i, line) in lines.iter().enumerate() {
                    let y = first - i as f64 * size * LINE_FACTOR;
                    if y + ascent * size < 0.0 {
                        break; // below the box: clipped anyway
                    }
                    if line.is_empty() {
                        continue;
                    }
                    let x = aligned(inner, avail_w, font.units(line) / 1000.0 * size, *align);
                    let _ = writeln!(out, "1 0 0 1 {} {} Tm {} Tj", fmt(x), fmt(y), hex(line));
                }
                out.push_str("ET\n");
            }
        }
        Content::List { options, selected } => {
            let rows: Vec<Vec<u8>> =
                options.iter().map(|o| font.encode(o).ok_or("a character its font cannot show")).collect::<Result<_, _>>()?;
            let size = if da.size > 0.0 { da.size } else { AUTO_MULTILINE_START };
            let row_h = size * LINE_FACTOR;
            // At most the options there are (a huge box over a tiny font saturates the cast).
            let visible = (((h - 2.0 * inset) / row_h).floor() as usize).clamp(1, rows.len().max(1));
            let top_index = match selected {
                Some(s) if *s >= visible => s + 1 - visible,
                _ => 0,
            };
            let top = h - inset;
            for (row, index) in (top_index..rows.len()).enumerate().take(visible + 1) {
                let band_bottom = top - (row + 1) as f64 * row_h;
                if Some(index) == *selected {
                    let _ = writeln!(
                        out,
                        "q {HIGHLIGHT} {} {} {} {} re f Q",
                        fmt(inset),
                        fmt(band_bottom),
                        fmt((w - 2.0 * inset).max(0.0)),
                        fmt(row_h)
                    );
                }
            }
            begin(&mut out, size);
            for (row, index) in (top_index..rows.len()).enumerate().take(visible + 1) {
                let band_bottom = top - (row + 1) as f64 * row_h;
                let y = band_bottom + (row_h - box_h * size) / 2.0 - descent * size;
                let _ = writeln!(out, "1 0 0 1 {} {} Tm {} Tj", fmt(inner), fmt(y), hex(&rows[index]));
            }
            out.push_str("ET\n");
        }
    }
    out.push_str("Q\nEMC\n");
    Ok(out.into_bytes())
}

/// The text's lines (split at CR LF, CR or LF).
pub(super) fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match current.find(['\r', '\n']) {
            Some(at) => {
                let skip = if current[at..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&current[at + skip..]);
                Some(&current[..at])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// Greedy line breaking of one paragraph (`codes`) into lines at most `max` units wide.
fn wrap(font: &Font, codes: &[u8], max: f64) -> Vec<Vec<u8>> {
    let space = font.code(' ');
    let space_w = space.map_or(0.0, |s| font.width(s));
    let mut lines = Vec::new();
    let mut line: Vec<u8> = Vec::new();
    let mut line_w = 0.0;
    let words: Vec<&[u8]> = match space {
        Some(s) => codes.split(|&c| c == s).collect(),
        None => vec![codes],
    };
    for (i, word) in words.into_iter().enumerate() {
        let word_w = font.units(word);
        if i > 0 {
            if !line.is_empty() && line_w + space_w + word_w > max {
                lines.push(std::mem::take(&mut line));
                line_w = 0.0;
            } else if let Some(s) = space {
                line.push(s);
                line_w += space_w;
            }
        }
        if line.is_empty() && word_w > max {
            for &c in word {
                let w = font.width(c);
                if !line.is_empty() && line_w + w > max {
                    lines.push(std::mem::take(&mut line));
                    line_w = 0.0;
                }
                line.push(c);
                line_w += w;
            }
        } else {
            line.extend_from_slice(word);
            line_w += word_w;
        }
    }
    lines.push(line);
    lines
}

/// Start of a line `width` wide in the `avail` points from `left`, per /Q; text wider than
/// the box starts at the left, so its beginning shows.
fn aligned(left: f64, avail: f64, width: f64, align: i64) -> f64 {
    if width >= avail {
        return left;
    }
    match align {
        1 => left + (avail - width) / 2.0,
        2 => left + avail - width,
        _ => left,
    }
}

fn hex(codes: &[u8]) -> String {
    let mut out = String::with_capacity(codes.len() * 2 + 2);
    out.push('<');
    for c in codes {
        let _ = write!(out, "{c:02X}");
    }
    out.push('>');
    out
}

/// A number for a content stream: at most three decimals, no trailing zeros.
pub(super) fn fmt(value: f64) -> String {
    let rounded = (value * 1000.0).round() / 1000.0;
    if rounded == 0.0 {
        return "0".into();
    }
    let mut s = format!("{rounded:.3}");
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.pop();
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn default_appearances_parse() {
        let da = parse_da(b"0 0 0 rg\n/Helvetica 18 Tf").unwrap();
        assert_eq!((da.font.as_slice(), da.size, da.colour.as_str()), (&b"Helvetica"[..], 18.0, "0 0 0 rg"));
        let da = parse_da(b"/Helv 0 Tf .1 .1 .1 rg").unwrap();
        assert_eq!((da.font.as_slice(), da.size, da.colour.as_str()), (&b"Helv"[..], 0.0, "0.1 0.1 0.1 rg"));
        assert_eq!(parse_da(b"/Helv 12 Tf 0 g 2 Tc"), Err("a /DA with operators other than a font and colour"));
        assert!(parse_da(b"0 g").is_err());
    }

    #[test]
    fn helvetica_encodes_win_ansi_and_measures_with_afm_widths() {
        let font = Font::helvetica();
        assert_eq!(font.encode("Aé€ü—").unwrap(), vec![0x41, 0xE9, 0x80, 0xFC, 0x97]);
        assert_eq!(font.encode("学"), None);
        assert_eq!(font.units(&font.encode("Hi").unwrap()), 722.0 + 222.0);
        assert_eq!(font.encode("\u{A0}").unwrap(), vec![0x20]);
    }

    #[test]
    fn lines_split_and_wrap() {
        assert_eq!(split_lines("a\nb\r\nc\rd").collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        assert_eq!(split_lines("").collect::<Vec<_>>(), [""]);
        assert_eq!(split_lines("x\n").collect::<Vec<_>>(), ["x", ""]);
        let font = Font::helvetica();
        let codes = font.encode("aaa bbb ccc").unwrap();
        // "aaa bbb" is 556 * 6 + 278 = 3614 units wide.
        let lines = wrap(&font, &codes, 3700.0);
        assert_eq!(lines, vec![b"aaa bbb".to_vec(), b"ccc".to_vec()]);
        let lines = wrap(&font, &font.encode("abcdefgh").unwrap(), 1200.0);
        assert_eq!(lines, vec![b"ab".to_vec(), b"cd".to_vec(), b"ef".to_vec(), b"gh".to_vec()]);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(fmt(1.0), "1");
        assert_eq!(fmt(-0.0001), "0");
        assert_eq!(fmt(2.5301), "2.53");
        assert_eq!(fmt(-12.345_6), "-12.346");
    }
}

#[cfg(test)]
mod layout_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn plain(width: f64, height: f64) -> Look {
        Look { width, height, background: None, border: Some((Colour(vec![0.0]), 1.0, Style::Solid)) }
    }

    /// (x, y) of each `1 0 0 1 x y Tm` or `x y Td` in a stream, and the font size.
    fn positions(stream: &[u8]) -> (Vec<(f64, f64)>, f64) {
        let text = String::from_utf8(stream.to_vec()).unwrap();
        let mut out = Vec::new();
        let mut size = 0.0;
        for line in text.lines() {
            let t: Vec<&str> = line.split(' ').collect();
            if let Some(i) = t.iter().position(|w| *w == "Tm") {
                out.push((t[i - 2].parse().unwrap(), t[i - 1].parse().unwrap()));
            } else if let Some(i) = t.iter().position(|w| *w == "Td") {
                out.push((t[i - 2].parse().unwrap(), t[i - 1].parse().unwrap()));
            } else if line.ends_with(" Tf") {
                size = t[t.len() - 2].parse().unwrap();
            }
        }
        (out, size)
    }

    #[test]
    fn one_line_text_aligns_per_q_and_centres_vertically() {
        let font = Font::helvetica();
        let da = parse_da(b"/Helv 10 Tf 0 g").unwrap();
        let look = plain(200.0, 20.0);
        let width = font.units(&font.encode("Hi").unwrap()) / 1000.0 * 10.0;
        let x = |align| {
            let s = stream(&look, &da, &font, &Content::Text { text: "Hi", multiline: false, comb: None, align }).unwrap();
            positions(&s).0[0]
        };
        assert_eq!(x(0).0, 3.0, "border 1 + padding 2");
        assert!((x(2).0 + width - 197.0).abs() < 0.01, "right edge at 200 - 3");
        assert!((x(1).0 - (100.0 - width / 2.0)).abs() < 0.01);
        // Baseline: the line box (ascent - descent) centred in the height.
        let y = x(0).1;
        assert!((y - ((20.0 - 9.25) / 2.0 + 2.07)).abs() < 0.01, "{y}");
    }

    #[test]
    fn automatic_size_fits_the_box() {
        let font = Font::helvetica();
        let da = parse_da(b"/Helv 0 Tf 0 g").unwrap();
        let text = "A fairly long value for a small box";
        let s = stream(&plain(100.0, 30.0), &da, &font, &Content::Text { text, multiline: false, comb: None, align: 0 }).unwrap();
        let (_, size) = positions(&s);
        let width = font.units(&font.encode(text).unwrap()) / 1000.0 * size;
        assert!(width <= 94.01 && width > 90.0, "{size} pt makes it {width} wide");
        // Multi-line: shrinks from 12 pt until every line fits the height.
        let long = "word ".repeat(60);
        let look = plain(100.0, 60.0);
        let s = stream(&look, &da, &font, &Content::Text { text: &long, multiline: true, comb: None, align: 0 }).unwrap();
        let (lines, size) = positions(&s);
        assert!((AUTO_MIN..12.0).contains(&size), "{size}");
        let lowest = lines.iter().map(|(_, y)| *y).fold(f64::MAX, f64::min);
        assert!(lowest + font.descent / 1000.0 * size >= 3.0 - 0.01, "the last line stays inside: {lowest}");
    }

    #[test]
    fn comb_fields_put_one_character_in_each_cell() {
        let font = Font::helvetica();
        let da = parse_da(b"/Helv 10 Tf 0 g").unwrap();
        let s =
            stream(&plain(102.0, 20.0), &da, &font, &Content::Text { text: "1234", multiline: false, comb: Some(5), align: 0 }).unwrap();
        let (cells, _) = positions(&s);
        assert_eq!(cells.len(), 4);
        // Cells are 20 wide from x = 1; a digit is 5.56 wide at 10 pt.
        for (i, (x, _)) in cells.iter().enumerate() {
            assert!((x - (1.0 + 20.0 * i as f64 + (20.0 - 5.56) / 2.0)).abs() < 0.01, "{i}: {x}");
        }
    }

    #[test]
    fn multi_line_text_keeps_line_breaks_and_wraps_words() {
        let font = Font::helvetica();
        let da = parse_da(b"/Helv 10 Tf 0 g").unwrap();
        let look = plain(100.0, 100.0);
        let s = stream(&look, &da, &font, &Content::Text { text: "one\n\nthree", multiline: true, comb: None, align: 0 }).unwrap();
        let (lines, _) = positions(&s);
        assert_eq!(lines.len(), 2, "the empty line is skipped, not drawn");
        assert!((lines[0].1 - lines[1].1 - 2.0 * 11.5).abs() < 0.01, "two leadings apart");
        let s = stream(&look, &da, &font, &Content::Text { text: &"abc ".repeat(12), multiline: true, comb: None, align: 0 }).unwrap();
        assert!(positions(&s).0.len() > 1, "wrapped");
    }
}
