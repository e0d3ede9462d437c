//! A page's language: what it declares (`<html lang>`, `xml:lang`, a
//! `Content-Language` header or `<meta http-equiv>`), else what its text
//! says when the text says it clearly (trigram detection by `whatlang`).
//!
//! Pages in different languages are never copies of each other, however
//! many lines they share (a command reference, a table of options, code
//! samples are nearly the same text in every translation of a manual); the
//! similarity stage and the collections stage read [`Language`] for that.
//!
//! A declaration wins over detection: a page that is mostly commands or
//! code is often detected as English whatever language it is written in,
//! while the declaration says which edition of the manual it belongs to.
//! Codes are ISO 639-3 (`eng`, `fra`), the ones `whatlang` uses; a
//! declared two-letter ISO 639-1 code is mapped to its ISO 639-3 code.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A language, as its ISO 639-3 code (three lower-case ASCII letters).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Language([u8; 3]);

impl Language {
    /// The language of an ISO 639-3 code (`fra`), if it is one.
    pub fn from_code(code: &str) -> Option<Language> {
        let bytes = code.as_bytes();
        if bytes.len() != 3 || !bytes.iter().all(u8::is_ascii_alphabetic) {
            return None;
        }
        Some(Language([
            bytes[0].to_ascii_lowercase(),
            bytes[1].to_ascii_lowercase(),
            bytes[2].to_ascii_lowercase(),
        ]))
    }

    /// The language a BCP 47 tag declares (`fr`, `fr-CA`, `en_GB`, `deu`):
    /// its primary subtag, a two-letter code mapped to ISO 639-3. `None`
    /// for an empty tag, `*`, `x-…` private tags and unknown two-letter
    /// codes.
    pub fn from_tag(tag: &str) -> Option<Language> {
        let primary = tag
            .trim()
            .split(['-', '_', ',', ';', ' '])
            .next()
            .unwrap_or("");
        match primary.len() {
            2 => {
                let lower = primary.to_ascii_lowercase();
                TWO_LETTER
                    .iter()
                    .find(|(two, _)| *two == lower)
                    .and_then(|(_, three)| Language::from_code(three))
            }
            3 => Language::from_code(primary),
            _ => None,
        }
    }

    /// The ISO 639-3 code.
    pub fn code(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or("und")
    }

    /// The language's English name when `whatlang` knows it, else its code.
    pub fn name(&self) -> String {
        whatlang::Lang::from_code(self.code())
            .map_or_else(|| self.code().to_string(), |lang| lang.eng_name().into())
    }
}

impl fmt::Display for Language {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.code())
    }
}

impl fmt::Debug for Language {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Language({})", self.code())
    }
}

/// Detection reads at most this many bytes of a page's text: the first
/// screens of prose say the language as well as the whole page does, and
/// the cost stays bounded on long pages.
pub const DETECTION_BYTES: usize = 4096;

/// Below this many letters, detection is not tried: a short page (a
/// heading, a redirect stub, a list of names) says too little.
pub const DETECTION_MIN_LETTERS: usize = 200;

/// The language the text says, when it says it reliably (`whatlang`'s own
/// reliability test on the first [`DETECTION_BYTES`] bytes).
pub fn detect(text: &str) -> Option<Language> {
    let mut end = text.len().min(DETECTION_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let sample = &text[..end];
    if sample.chars().filter(|c| c.is_alphabetic()).count() < DETECTION_MIN_LETTERS {
        return None;
    }
    let info = whatlang::detect(sample)?;
    info.is_reliable()
        .then(|| Language::from_code(info.lang().code()))
        .flatten()
}

/// What a page says of its language, and how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PageLanguage {
    /// It declares none and its text says none clearly.
    #[default]
    Unknown,
    /// Its markup or HTTP header declares it.
    Declared(Language),
    /// Its text says it ([`detect`]).
    Detected(Language),
}

impl PageLanguage {
    pub fn language(self) -> Option<Language> {
        match self {
            PageLanguage::Unknown => None,
            PageLanguage::Declared(language) | PageLanguage::Detected(language) => Some(language),
        }
    }

    pub fn is_declared(self) -> bool {
        matches!(self, PageLanguage::Declared(_))
    }
}

/// A page's language: the first declaration that names a language
/// (`declared`, in order of precedence), else what its text reliably says.
pub fn decide<'a>(declared: impl IntoIterator<Item = &'a str>, text: &str) -> PageLanguage {
    match declared.into_iter().find_map(Language::from_tag) {
        Some(language) => PageLanguage::Declared(language),
        None => detect(text).map_or(PageLanguage::Unknown, PageLanguage::Detected),
    }
}

/// Whether two pages may be copies as far as their languages go: unless
/// both are known and differ.
pub fn compatible(first: Option<Language>, second: Option<Language>) -> bool {
    match (first, second) {
        (Some(first), Some(second)) => first == second,
        _ => true,
    }
}

/// ISO 639-1 codes and their ISO 639-3 codes, as `whatlang` names the
/// languages (Mandarin for `zh`, Persian for `fa`, Bokmål for `no`).
const TWO_LETTER: &[(&str, &str)] = &[
    ("af", "afr"),
    ("ak", "aka"),
    ("am", "amh"),
    ("ar", "ara"),
    ("az", "aze"),
    ("be", "bel"),
    ("bg", "bul"),
    ("bn", "ben"),
    ("ca", "cat"),
    ("cs", "ces"),
    ("cy", "cym"),
    ("da", "dan"),
    ("de", "deu"),
    ("el", "ell"),
    ("en", "eng"),
    ("eo", "epo"),
    ("es", "spa"),
    ("et", "est"),
    ("eu", "eus"),
    ("fa", "pes"),
    ("fi", "fin"),
    ("fr", "fra"),
    ("ga", "gle"),
    ("gl", "glg"),
    ("gu", "guj"),
    ("he", "heb"),
    ("hi", "hin"),
    ("hr", "hrv"),
    ("hu", "hun"),
    ("hy", "hye"),
    ("id", "ind"),
    ("is", "isl"),
    ("it", "ita"),
    ("ja", "jpn"),
    ("jv", "jav"),
    ("ka", "kat"),
    ("km", "khm"),
    ("kn", "kan"),
    ("ko", "kor"),
    ("la", "lat"),
    ("lt", "lit"),
    ("lv", "lav"),
    ("mk", "mkd"),
    ("ml", "mal"),
    ("mr", "mar"),
    ("ms", "msa"),
    ("my", "mya"),
    ("nb", "nob"),
    ("ne", "nep"),
    ("nl", "nld"),
    ("nn", "nno"),
    ("no", "nob"),
    ("or", "ori"),
    ("pa", "pan"),
    ("pl", "pol"),
    ("pt", "por"),
    ("ro", "ron"),
    ("ru", "rus"),
    ("si", "sin"),
    ("sk", "slk"),
    ("sl", "slv"),
    ("sn", "sna"),
    ("sq", "sqi"),
    ("sr", "srp"),
    ("sv", "swe"),
    ("ta", "tam"),
    ("te", "tel"),
    ("th", "tha"),
    ("tk", "tuk"),
    ("tl", "tgl"),
    ("tr", "tur"),
    ("uk", "ukr"),
    ("ur", "urd"),
    ("uz", "uzb"),
    ("vi", "vie"),
    ("yi", "yid"),
    ("zh", "cmn"),
    ("zu", "zul"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn language(code: &str) -> Option<Language> {
        Language::from_code(code)
    }

    #[test]
    fn declared_tags_name_their_primary_language() {
        assert_eq!(Language::from_tag("fr"), language("fra"));
        assert_eq!(Language::from_tag("fr-CA"), language("fra"));
        assert_eq!(Language::from_tag("en_GB"), language("eng"));
        assert_eq!(Language::from_tag(" DE "), language("deu"));
        assert_eq!(Language::from_tag("deu"), language("deu"));
        assert_eq!(Language::from_tag("zh-Hans"), language("cmn"));
        assert_eq!(Language::from_tag("en, fr"), language("eng"));
        for none in ["", "*", "x-klingon", "q", "zz", "123", "französisch"] {
            assert_eq!(Language::from_tag(none), None, "{none:?}");
        }
        assert_eq!(language("fra").unwrap().to_string(), "fra");
        assert_eq!(language("fra").unwrap().name(), "French");
    }

    const FRENCH: &str =
        "Ce chapitre explique comment installer le serveur et comment le configurer \
        pour la première fois. Les options de la ligne de commande sont décrites dans la section \
        suivante, avec des exemples qui montrent les cas les plus fréquents. Lorsque le serveur \
        démarre, il lit son fichier de configuration et vérifie que chaque directive est valable.";
    const ENGLISH: &str =
        "This chapter explains how to install the server and how to configure it \
        for the first time. The command line options are described in the next section, with \
        examples that show the most frequent cases. When the server starts, it reads its \
        configuration file and checks that every directive is valid.";

    #[test]
    fn text_says_its_language_when_there_is_enough_of_it() {
        assert_eq!(detect(FRENCH), language("fra"));
        assert_eq!(detect(ENGLISH), language("eng"));
        assert_eq!(detect("ls -la /etc"), None, "too short to tell");
        // Only the first screens are read, cut on a character boundary.
        let long = format!("{}{}", "é".repeat(DETECTION_BYTES / 2 + 1), FRENCH);
        let _ = detect(&long);
    }

    #[test]
    fn a_declaration_wins_over_the_text() {
        let declared = |code| PageLanguage::Declared(language(code).unwrap());
        let detected = |code| PageLanguage::Detected(language(code).unwrap());
        assert_eq!(decide(["fr"], ENGLISH), declared("fra"));
        assert_eq!(decide(["", "de"], ENGLISH), declared("deu"));
        assert_eq!(decide(["x-private"], FRENCH), detected("fra"));
        assert_eq!(decide([], ENGLISH), detected("eng"));
        assert_eq!(decide([], "git commit -m"), PageLanguage::Unknown);
        assert_eq!(declared("fra").language(), language("fra"));
        assert!(declared("fra").is_declared() && !detected("fra").is_declared());
    }

    #[test]
    fn only_two_known_different_languages_are_incompatible() {
        let (english, french) = (language("eng"), language("fra"));
        assert!(compatible(english, english));
        assert!(compatible(english, None));
        assert!(compatible(None, None));
        assert!(!compatible(english, french));
    }
}
