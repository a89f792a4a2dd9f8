//! Font data for appearance streams: Helvetica's advance widths (from Adobe's Core 14 AFM
//! metrics, `Helvetica.afm`, version 002.000) for the glyphs of the two Latin encodings PDF
//! forms use, and those encodings (StandardEncoding, Helvetica's built-in one, and
//! WinAnsiEncoding, PDF 32000-1 annex D) as code → glyph tables. Generated once; the widths
//! are in 1/1000 em. That AFM predates the euro sign: `Euro` gets 556, the width of
//! Helvetica's other currency signs (later Helvetica versions have the same).

/// No glyph at this code.
pub(super) const NONE: u16 = u16::MAX;

/// Helvetica's ascender and descender (AFM `Ascender`, `Descender`).
pub(super) const HELVETICA_ASCENT: f64 = 718.0;
pub(super) const HELVETICA_DESCENT: f64 = -207.0;

/// The glyph called `name` (as in an encoding's /Differences): its index in `GLYPHS`.
pub(super) fn glyph_index(name: &[u8]) -> Option<u16> {
    GLYPHS.binary_search_by(|(n, _, _)| n.as_bytes().cmp(name)).ok().and_then(|i| u16::try_from(i).ok())
}

/// Helvetica's glyphs in the Latin character sets of WinAnsiEncoding and StandardEncoding:
/// (glyph name, Unicode, advance width in 1/1000 em), sorted by name.
#[rustfmt::skip]
pub(super) const GLYPHS: [(&str, char, u16); 229] = [
    ("A", '\u{0041}', 667), ("AE", '\u{00C6}', 1000), ("Aacute", '\u{00C1}', 667), ("Acircumflex", '\u{00C2}', 667),
    ("Adieresis", '\u{00C4}', 667), ("Agrave", '\u{00C0}', 667), ("Aring", '\u{00C5}', 667),
    ("Atilde", '\u{00C3}', 667), ("B", '\u{0042}', 667), ("C", '\u{0043}', 722), ("Ccedilla", '\u{00C7}', 722),
    ("D", '\u{0044}', 722), ("E", '\u{0045}', 667), ("Eacute", '\u{00C9}', 667), ("Ecircumflex", '\u{00CA}', 667),
    ("Edieresis", '\u{00CB}', 667), ("Egrave", '\u{00C8}', 667), ("Eth", '\u{00D0}', 722), ("Euro", '\u{20AC}', 556),
    ("F", '\u{0046}', 611), ("G", '\u{0047}', 778), ("H", '\u{0048}', 722), ("I", '\u{0049}', 278),
    ("Iacute", '\u{00CD}', 278), ("Icircumflex", '\u{00CE}', 278), ("Idieresis", '\u{00CF}', 278),
    ("Igrave", '\u{00CC}', 278), ("J", '\u{004A}', 500), ("K", '\u{004B}', 667), ("L", '\u{004C}', 556),
    ("Lslash", '\u{0141}', 556), ("M", '\u{004D}', 833), ("N", '\u{004E}', 722), ("Ntilde", '\u{00D1}', 722),
    ("O", '\u{004F}', 778), ("OE", '\u{0152}', 1000), ("Oacute", '\u{00D3}', 778), ("Ocircumflex", '\u{00D4}', 778),
    ("Odieresis", '\u{00D6}', 778), ("Ograve", '\u{00D2}', 778), ("Oslash", '\u{00D8}', 778),
    ("Otilde", '\u{00D5}', 778), ("P", '\u{0050}', 667), ("Q", '\u{0051}', 778), ("R", '\u{0052}', 722),
    ("S", '\u{0053}', 667), ("Scaron", '\u{0160}', 667), ("T", '\u{0054}', 611), ("Thorn", '\u{00DE}', 667),
    ("U", '\u{0055}', 722), ("Uacute", '\u{00DA}', 722), ("Ucircumflex", '\u{00DB}', 722),
    ("Udieresis", '\u{00DC}', 722), ("Ugrave", '\u{00D9}', 722), ("V", '\u{0056}', 667), ("W", '\u{0057}', 944),
    ("X", '\u{0058}', 667), ("Y", '\u{0059}', 667), ("Yacute", '\u{00DD}', 667), ("Ydieresis", '\u{0178}', 667),
    ("Z", '\u{005A}', 611), ("Zcaron", '\u{017D}', 611), ("a", '\u{0061}', 556), ("aacute", '\u{00E1}', 556),
    ("acircumflex", '\u{00E2}', 556), ("acute", '\u{00B4}', 333), ("adieresis", '\u{00E4}', 556),
    ("ae", '\u{00E6}', 889), ("agrave", '\u{00E0}', 556), ("ampersand", '\u{0026}', 667), ("aring", '\u{00E5}', 556),
    ("asciicircum", '\u{005E}', 469), ("asciitilde", '\u{007E}', 584), ("asterisk", '\u{002A}', 389),
    ("at", '\u{0040}', 1015), ("atilde", '\u{00E3}', 556), ("b", '\u{0062}', 556), ("backslash", '\u{005C}', 278),
    ("bar", '\u{007C}', 260), ("braceleft", '\u{007B}', 334), ("braceright", '\u{007D}', 334),
    ("bracketleft", '\u{005B}', 278), ("bracketright", '\u{005D}', 278), ("breve", '\u{02D8}', 333),
    ("brokenbar", '\u{00A6}', 260), ("bullet", '\u{2022}', 350), ("c", '\u{0063}', 500), ("caron", '\u{02C7}', 333),
    ("ccedilla", '\u{00E7}', 500), ("cedilla", '\u{00B8}', 333), ("cent", '\u{00A2}', 556),
    ("circumflex", '\u{02C6}', 333), ("colon", '\u{003A}', 278), ("comma", '\u{002C}', 278),
    ("copyright", '\u{00A9}', 737), ("currency", '\u{00A4}', 556), ("d", '\u{0064}', 556),
    ("dagger", '\u{2020}', 556), ("daggerdbl", '\u{2021}', 556), ("degree", '\u{00B0}', 400),
    ("dieresis", '\u{00A8}', 333), ("divide", '\u{00F7}', 584), ("dollar", '\u{0024}', 556),
    ("dotaccent", '\u{02D9}', 333), ("dotlessi", '\u{0131}', 278), ("e", '\u{0065}', 556),
    ("eacute", '\u{00E9}', 556), ("ecircumflex", '\u{00EA}', 556), ("edieresis", '\u{00EB}', 556),
    ("egrave", '\u{00E8}', 556), ("eight", '\u{0038}', 556), ("ellipsis", '\u{2026}', 1000),
    ("emdash", '\u{2014}', 1000), ("endash", '\u{2013}', 556), ("equal", '\u{003D}', 584), ("eth", '\u{00F0}', 556),
    ("exclam", '\u{0021}', 278), ("exclamdown", '\u{00A1}', 333), ("f", '\u{0066}', 278), ("fi", '\u{FB01}', 500),
    ("five", '\u{0035}', 556), ("fl", '\u{FB02}', 500), ("florin", '\u{0192}', 556), ("four", '\u{0034}', 556),
    ("fraction", '\u{2044}', 167), ("g", '\u{0067}', 556), ("germandbls", '\u{00DF}', 611),
    ("grave", '\u{0060}', 333), ("greater", '\u{003E}', 584), ("guillemotleft", '\u{00AB}', 556),
    ("guillemotright", '\u{00BB}', 556), ("guilsinglleft", '\u{2039}', 333), ("guilsinglright", '\u{203A}', 333),
    ("h", '\u{0068}', 556), ("hungarumlaut", '\u{02DD}', 333), ("hyphen", '\u{002D}', 333), ("i", '\u{0069}', 222),
    ("iacute", '\u{00ED}', 278), ("icircumflex", '\u{00EE}', 278), ("idieresis", '\u{00EF}', 278),
    ("igrave", '\u{00EC}', 278), ("j", '\u{006A}', 222), ("k", '\u{006B}', 500), ("l", '\u{006C}', 222),
    ("less", '\u{003C}', 584), ("logicalnot", '\u{00AC}', 584), ("lslash", '\u{0142}', 222), ("m", '\u{006D}', 833),
    ("macron", '\u{00AF}', 333), ("minus", '\u{2212}', 584), ("mu", '\u{00B5}', 556), ("multiply", '\u{00D7}', 584),
    ("n", '\u{006E}', 556), ("nine", '\u{0039}', 556), ("ntilde", '\u{00F1}', 556), ("numbersign", '\u{0023}', 556),
    ("o", '\u{006F}', 556), ("oacute", '\u{00F3}', 556), ("ocircumflex", '\u{00F4}', 556),
    ("odieresis", '\u{00F6}', 556), ("oe", '\u{0153}', 944), ("ogonek", '\u{02DB}', 333), ("ograve", '\u{00F2}', 556),
    ("one", '\u{0031}', 556), ("onehalf", '\u{00BD}', 834), ("onequarter", '\u{00BC}', 834),
    ("onesuperior", '\u{00B9}', 333), ("ordfeminine", '\u{00AA}', 370), ("ordmasculine", '\u{00BA}', 365),
    ("oslash", '\u{00F8}', 611), ("otilde", '\u{00F5}', 556), ("p", '\u{0070}', 556), ("paragraph", '\u{00B6}', 537),
    ("parenleft", '\u{0028}', 333), ("parenright", '\u{0029}', 333), ("percent", '\u{0025}', 889),
    ("period", '\u{002E}', 278), ("periodcentered", '\u{00B7}', 278), ("perthousand", '\u{2030}', 1000),
    ("plus", '\u{002B}', 584), ("plusminus", '\u{00B1}', 584), ("q", '\u{0071}', 556), ("question", '\u{003F}', 556),
    ("questiondown", '\u{00BF}', 611), ("quotedbl", '\u{0022}', 355), ("quotedblbase", '\u{201E}', 333),
    ("quotedblleft", '\u{201C}', 333), ("quotedblright", '\u{201D}', 333), ("quoteleft", '\u{2018}', 222),
    ("quoteright", '\u{2019}', 222), ("quotesinglbase", '\u{201A}', 222), ("quotesingle", '\u{0027}', 191),
    ("r", '\u{0072}', 333), ("registered", '\u{00AE}', 737), ("ring", '\u{02DA}', 333), ("s", '\u{0073}', 500),
    ("scaron", '\u{0161}', 500), ("section", '\u{00A7}', 556), ("semicolon", '\u{003B}', 278),
    ("seven", '\u{0037}', 556), ("six", '\u{0036}', 556), ("slash", '\u{002F}', 278), ("space", '\u{0020}', 278),
    ("sterling", '\u{00A3}', 556), ("t", '\u{0074}', 278), ("thorn", '\u{00FE}', 556), ("three", '\u{0033}', 556),
    ("threequarters", '\u{00BE}', 834), ("threesuperior", '\u{00B3}', 333), ("tilde", '\u{02DC}', 333),
    ("trademark", '\u{2122}', 1000), ("two", '\u{0032}', 556), ("twosuperior", '\u{00B2}', 333),
    ("u", '\u{0075}', 556), ("uacute", '\u{00FA}', 556), ("ucircumflex", '\u{00FB}', 556),
    ("udieresis", '\u{00FC}', 556), ("ugrave", '\u{00F9}', 556), ("underscore", '\u{005F}', 556),
    ("v", '\u{0076}', 500), ("w", '\u{0077}', 722), ("x", '\u{0078}', 500), ("y", '\u{0079}', 500),
    ("yacute", '\u{00FD}', 500), ("ydieresis", '\u{00FF}', 500), ("yen", '\u{00A5}', 556), ("z", '\u{007A}', 500),
    ("zcaron", '\u{017E}', 500), ("zero", '\u{0030}', 556),
];

/// StandardEncoding: code → index into `GLYPHS` (`NONE` where the code has no glyph).
#[rustfmt::skip]
pub(super) const STANDARD: [u16; 256] = [
    NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    202, 116, 184, 155, 102, 175, 69, 189, 173, 174, 73, 179, 93, 135, 176, 201,
    228, 163, 211, 206, 123, 120, 200, 199, 110, 153, 92, 198, 144, 114, 128, 182,
    74, 0, 8, 9, 11, 12, 19, 20, 21, 22, 27, 28, 29, 31, 32, 34,
    42, 43, 44, 45, 47, 49, 54, 55, 56, 57, 60, 81, 77, 82, 71, 218,
    188, 62, 76, 86, 96, 105, 118, 125, 133, 136, 141, 142, 143, 147, 152, 156,
    171, 181, 192, 195, 204, 213, 219, 220, 221, 222, 226, 79, 78, 80, 72, NONE,
    NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    NONE, 117, 90, 203, 124, 225, 122, 197, 95, 191, 186, 129, 131, 132, 119, 121,
    NONE, 113, 97, 98, 177, NONE, 172, 85, 190, 185, 187, 130, 111, 178, NONE, 183,
    NONE, 127, 65, 91, 209, 148, 83, 103, 100, NONE, 194, 89, NONE, 134, 161, 87,
    112, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    NONE, 1, NONE, 167, NONE, NONE, NONE, NONE, 30, 40, 35, 168, NONE, NONE, NONE, NONE,
    NONE, 67, NONE, NONE, NONE, 104, NONE, NONE, 146, 169, 160, 126, NONE, NONE, NONE, NONE,
];

/// WinAnsiEncoding (PDF 32000-1 annex D): code → index into `GLYPHS` (`NONE` where undefined).
#[rustfmt::skip]
pub(super) const WIN_ANSI: [u16; 256] = [
    NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE,
    202, 116, 184, 155, 102, 175, 69, 191, 173, 174, 73, 179, 93, 135, 176, 201,
    228, 163, 211, 206, 123, 120, 200, 199, 110, 153, 92, 198, 144, 114, 128, 182,
    74, 0, 8, 9, 11, 12, 19, 20, 21, 22, 27, 28, 29, 31, 32, 34,
    42, 43, 44, 45, 47, 49, 54, 55, 56, 57, 60, 81, 77, 82, 71, 218,
    127, 62, 76, 86, 96, 105, 118, 125, 133, 136, 141, 142, 143, 147, 152, 156,
    171, 181, 192, 195, 204, 213, 219, 220, 221, 222, 226, 79, 78, 80, 72, NONE,
    18, NONE, 190, 122, 185, 111, 97, 98, 91, 178, 46, 131, 35, NONE, 61, NONE,
    NONE, 188, 189, 186, 187, 85, 113, 112, 209, 210, 196, 132, 160, NONE, 227, 59,
    202, 117, 90, 203, 95, 225, 84, 197, 100, 94, 167, 129, 145, 135, 193, 148,
    99, 180, 212, 208, 65, 150, 172, 177, 89, 166, 168, 130, 165, 164, 207, 183,
    5, 2, 3, 7, 4, 6, 1, 10, 16, 13, 14, 15, 26, 23, 24, 25,
    17, 33, 39, 36, 37, 41, 38, 151, 40, 53, 50, 51, 52, 58, 48, 126,
    68, 63, 64, 75, 66, 70, 67, 88, 109, 106, 107, 108, 140, 137, 138, 139,
    115, 154, 162, 157, 158, 170, 159, 101, 169, 217, 214, 215, 216, 223, 205, 224,
];
