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

/// Detection reads at most this many bytes of a page's text, about 150
/// words of prose: enough for trigram detection to say a language
/// reliably, and detection costs about 40 ns a byte (4 KB cost the whole
/// pipeline a quarter of its time on the generated 100,000-page web; this
/// costs a few percent).
pub const DETECTION_BYTES: usize = 1024;

/// The sample starts this far into the text (a share of it), past the
/// menus and headers a page opens with, which are the same in every
/// language edition of some sites.
const DETECTION_START: usize = 4;

/// Below this many letters, detection is not tried: a short page (a
/// heading, a redirect stub, a list of names) says too little.
pub const DETECTION_MIN_LETTERS: usize = 200;

/// The language the text says, when it says it reliably (`whatlang`'s own
/// reliability test on [`DETECTION_BYTES`] bytes of it, from a quarter of
/// the way in).
pub fn detect(text: &str) -> Option<Language> {
    // A quarter of the way in, unless that leaves less than a sample.
    let mut start = (text.len() / DETECTION_START).min(text.len().saturating_sub(DETECTION_BYTES));
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = text.len().min(start + DETECTION_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let sample = &text[start..end];
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
/// (`declared`, in order of precedence), else what `text` reliably says
/// (no text: not detected).
pub fn decide<'a>(declared: impl IntoIterator<Item = &'a str>, text: Option<&str>) -> PageLanguage {
    match declared.into_iter().find_map(Language::from_tag) {
        Some(language) => PageLanguage::Declared(language),
        None => text
            .and_then(detect)
            .map_or(PageLanguage::Unknown, PageLanguage::Detected),
    }
}

/// One page in this many that declares no language has its text's
/// detected, besides every folder's index page: detection costs about
/// 100 us a page (the whole pipeline a quarter of its time on the
/// generated 100,000-page web), and it only has to tell a folder's
/// language, which the similarity stage gives the folder's other pages
/// (`similarity::languages`).
pub const DETECTION_SAMPLE: u64 = 8;

/// Whether the page at `url` is one of the sample whose language is
/// detected (by a hash of the URL, so the same pages every time).
pub fn in_detection_sample(url: &str) -> bool {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes()).is_multiple_of(DETECTION_SAMPLE)
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
        // A sample is read, cut on character boundaries, from a quarter
        // of the way in: a page opening with a long menu in another
        // language says the language of its prose.
        let menu = "Home Download Community Documentation News ".repeat(8);
        let long = format!("{menu}{}", FRENCH.repeat(6));
        assert_eq!(detect(&long), language("fra"));
        let accents = format!("{}{}", "é".repeat(DETECTION_BYTES + 3), FRENCH);
        let _ = detect(&accents);
    }

    #[test]
    fn a_declaration_wins_over_the_text() {
        let declared = |code| PageLanguage::Declared(language(code).unwrap());
        let detected = |code| PageLanguage::Detected(language(code).unwrap());
        assert_eq!(decide(["fr"], Some(ENGLISH)), declared("fra"));
        assert_eq!(decide(["", "de"], Some(ENGLISH)), declared("deu"));
        assert_eq!(decide(["x-private"], Some(FRENCH)), detected("fra"));
        assert_eq!(decide([], Some(ENGLISH)), detected("eng"));
        assert_eq!(decide([], Some("git commit -m")), PageLanguage::Unknown);
        assert_eq!(decide([], None), PageLanguage::Unknown);
        assert_eq!(decide(["fr"], None), declared("fra"));
        assert_eq!(declared("fra").language(), language("fra"));
        assert!(declared("fra").is_declared() && !detected("fra").is_declared());
    }

    #[test]
    fn one_page_in_eight_is_detected_the_same_every_time() {
        let sampled = (0..8000)
            .filter(|n| in_detection_sample(&format!("http://example.org/doc/p{n}.html")))
            .count();
        assert!((800..1200).contains(&sampled), "{sampled}");
        assert_eq!(
            in_detection_sample("http://example.org/doc/p1.html"),
            in_detection_sample("http://example.org/doc/p1.html")
        );
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
