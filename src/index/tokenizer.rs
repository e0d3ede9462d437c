//! The text tokenizer of titles, bodies and chrome: tantivy's `en_stem`
//! (words split on anything not alphanumeric, long words dropped, lower case,
//! English stems), except that a word written with a closing `++` or `#`
//! keeps it. `C`, `C++` and `C#`, `F#` and `F`, are different languages a
//! searcher must be able to tell apart; split on punctuation they would all
//! be the word `c`. The suffix counts only when nothing alphanumeric follows
//! it, so `i++` in code is `i++` but `page#section` is `page` and `section`.

use std::str::CharIndices;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

/// The name the index's text fields give their tokenizer.
pub const TEXT_TOKENIZER: &str = "en_code";

/// Words of up to this many bytes are indexed (as `en_stem`).
const LONGEST_WORD: usize = 40;

/// The analyzer registered as [`TEXT_TOKENIZER`].
pub fn text_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(CachedStemmer::default())
        .build()
}

/// The analyzer of a search's snippets: [`text_analyzer`], but a word
/// whose first byte starts none of `terms` (the query's words as the text
/// field holds them, stemmed) is left unstemmed. A snippet marks the words
/// that are the terms, and an English stem keeps its word's first letter
/// (Snowball rewrites a word's end, and its exceptional forms, `dying` to
/// `die`, keep it too: `tests::english_stems_keep_a_words_first_letter`):
/// such a word is none of the terms, stemmed or not. Stemming every word of
/// the shown pages' windows, a lookup in a 3 MB table each, was most of
/// what a search's snippets cost.
pub fn snippet_analyzer(terms: &[String]) -> TextAnalyzer {
    let mut starts = [false; 256];
    for term in terms {
        if let Some(&first) = term.as_bytes().first() {
            starts[usize::from(first)] = true;
        }
    }
    TextAnalyzer::builder(CodeTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(CachedStemmer {
            starts: Some(Arc::new(starts)),
        })
        .build()
}

/// Registers the analyzer with an index (built or opened: tantivy keeps
/// only the tokenizer's name in the schema).
pub fn register(index: &tantivy::Index) {
    index.tokenizers().register(TEXT_TOKENIZER, text_analyzer());
}

/// Registers the analyzer with an index being built, adding the bytes of
/// every text it tokenizes to `tokenized`: what tantivy's indexing threads
/// have taken from their queue, which bounds what waits in it.
pub fn register_counting(index: &tantivy::Index, tokenized: Arc<AtomicU64>) {
    let tokenizer = CodeTokenizer {
        token: Token::default(),
        tokenized: Some(tokenized),
    };
    let analyzer = TextAnalyzer::builder(tokenizer)
        .filter(RemoveLongFilter::limit(LONGEST_WORD))
        .filter(LowerCaser)
        .filter(CachedStemmer::default())
        .build();
    index.tokenizers().register(TEXT_TOKENIZER, analyzer);
}

/// tantivy's English stemmer (`Stemmer::new(Language::English)`, the same
/// Snowball algorithm), remembering the stems it computed. Words repeat
/// (Zipf), and the stemmer was 7.5% of `index` on development crawl 1
/// (`perf`). The stems are remembered by thread ([`STEMS`]), for every
/// analyzer on it: tantivy clones the analyzer for each indexing thread,
/// each query and each search's snippets, and a clone's own memory started
/// empty each search (stemming the ten shown pages' text was a third of a
/// narrow query's search on the 1M generated web).
#[derive(Clone, Debug, Default)]
pub struct CachedStemmer {
    /// When set, only the words whose first byte is marked are stemmed
    /// ([`snippet_analyzer`]).
    starts: Option<Arc<[bool; 256]>>,
}

impl TokenFilter for CachedStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> CachedStemmerFilter<T> {
        CachedStemmerFilter {
            inner: tokenizer,
            starts: self.starts,
        }
    }
}

#[derive(Clone)]
pub struct CachedStemmerFilter<T> {
    inner: T,
    starts: Option<Arc<[bool; 256]>>,
}

impl<T: Tokenizer> Tokenizer for CachedStemmerFilter<T> {
    type TokenStream<'a> = CachedStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemmerStream {
            tail: self.inner.token_stream(text),
            starts: self.starts.as_deref(),
        }
    }
}

pub struct CachedStemmerStream<'a, S> {
    tail: S,
    starts: Option<&'a [bool; 256]>,
}

impl<S: TokenStream> TokenStream for CachedStemmerStream<'_, S> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let word = &mut self.tail.token_mut().text;
        let stemmed = match (self.starts, word.as_bytes().first()) {
            (Some(starts), Some(&first)) => starts[usize::from(first)],
            _ => true,
        };
        if stemmed {
            STEMS.with_borrow_mut(|stems| stems.stem(word));
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

thread_local! {
    /// The thread's remembered stems (3 MB once it has stemmed
    /// [`WORDS_BEFORE_SLOTS`] words: an indexing thread, a server's search
    /// threads; a thread that only parses a few queries never sets them up).
    static STEMS: std::cell::RefCell<StemCache> = const { std::cell::RefCell::new(StemCache::new()) };
}

/// Words of up to this many bytes are remembered with their stems; longer
/// ones (a few in a hundred) are stemmed each time.
const REMEMBERED_WORD: usize = 24;

/// Slots of a [`StemCache`]: 48 bytes each, 3 MB in all. With 16,384 slots
/// the words of the generated web's text evicted each other, and stemming
/// them again was half of what stems cost (`perf`); with 65,536 a word is
/// stemmed about once, and a lookup waits on memory a little longer, the
/// same time on that web; on real text, whose words are longer and more
/// varied, a word stemmed again costs more.
const STEM_SLOTS: usize = 1 << 16;

/// Words a [`StemCache`] stems directly before it sets up its slots: a
/// thread that parses a few queries does not pay for 3 MB.
const WORDS_BEFORE_SLOTS: u32 = 1 << 10;

/// A remembered word, zero-padded (a token holds no NUL: it is made of
/// alphanumerics, `+` and `#`), and its stem.
#[derive(Clone, Copy)]
struct StemSlot {
    word: [u8; REMEMBERED_WORD],
    stem: [u8; REMEMBERED_WORD - 1],
    stem_length: u8,
}

/// Stems remembered by word, a slot for each hash of a word (direct mapped:
/// a word evicts the one whose slot it takes). The slots sit inline, so a
/// lookup reads one line of memory and compares two fixed-size arrays; a
/// hash map of boxed strings, as before, missed the cache on each word's
/// key (its lookups were 27% of the index stage on the 100k generated web,
/// `perf`). Frequent words keep their slot, as the text repeats them.
#[derive(Default)]
struct StemCache {
    slots: Vec<StemSlot>,
    stemmed: u32,
}

impl StemCache {
    /// No slots yet ([`StemCache::sets_up`] makes them).
    const fn new() -> StemCache {
        StemCache {
            slots: Vec::new(),
            stemmed: 0,
        }
    }

    /// Replaces `word` by its stem.
    fn stem(&mut self, word: &mut String) {
        let length = word.len();
        if length > REMEMBERED_WORD || self.slots.is_empty() && !self.sets_up() {
            let stem = stem_of(word);
            word.clear();
            word.push_str(&stem);
            return;
        }
        let mut key = [0u8; REMEMBERED_WORD];
        key[..length].copy_from_slice(word.as_bytes());
        let slot = &mut self.slots[slot_of(&key)];
        if slot.word != key {
            let stem = stem_of(word);
            // A stem is no longer than its word; one too long for its slot
            // is not remembered.
            if stem.len() > REMEMBERED_WORD - 1 {
                word.clear();
                word.push_str(&stem);
                return;
            }
            slot.word = key;
            slot.stem[..stem.len()].copy_from_slice(stem.as_bytes());
            slot.stem_length = stem.len() as u8;
        }
        word.clear();
        // The slot holds a whole str's bytes.
        word.push_str(
            std::str::from_utf8(&slot.stem[..usize::from(slot.stem_length)]).unwrap_or_default(),
        );
    }

    /// Counts a word stemmed without slots; sets them up, and says so, once
    /// the text is long enough to be worth them.
    fn sets_up(&mut self) -> bool {
        self.stemmed += 1;
        if self.stemmed < WORDS_BEFORE_SLOTS {
            return false;
        }
        self.slots = vec![
            StemSlot {
                word: [0; REMEMBERED_WORD],
                stem: [0; REMEMBERED_WORD - 1],
                stem_length: 0,
            };
            STEM_SLOTS
        ];
        true
    }
}

/// The slot of a zero-padded word.
fn slot_of(key: &[u8; REMEMBERED_WORD]) -> usize {
    let mut hash = 0u64;
    for chunk in key.chunks_exact(8) {
        let mut lane = [0u8; 8];
        lane.copy_from_slice(chunk);
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(lane))
            .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    (hash >> (64 - STEM_SLOTS.trailing_zeros())) as usize
}

fn stem_of(word: &str) -> String {
    frostem::Stemmer::new(frostem::Algorithm::English)
        .stem(word)
        .into_owned()
}

/// Runs of alphanumeric characters, with a closing `++` or `#` kept.
#[derive(Clone, Default)]
pub struct CodeTokenizer {
    token: Token,
    /// Bytes of text tokenized, when counted.
    tokenized: Option<Arc<AtomicU64>>,
}

pub struct CodeTokenStream<'a> {
    text: &'a str,
    chars: CharIndices<'a>,
    token: &'a mut Token,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        if let Some(tokenized) = &self.tokenized {
            tokenized.fetch_add(text.len() as u64, Ordering::Relaxed);
        }
        self.token.reset();
        CodeTokenStream {
            text,
            chars: text.char_indices(),
            token: &mut self.token,
        }
    }
}

/// The length of a language suffix (`++` or `#`) at the start of `rest`,
/// when nothing alphanumeric follows it.
fn suffix_len(rest: &str) -> usize {
    let length = if rest.starts_with("++") {
        2
    } else if rest.starts_with('#') {
        1
    } else {
        return 0;
    };
    match rest[length..].chars().next() {
        Some(next) if next.is_alphanumeric() || next == '+' || next == '#' => 0,
        _ => length,
    }
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.token.text.clear();
        self.token.position = self.token.position.wrapping_add(1);
        while let Some((start, character)) = self.chars.next() {
            if !character.is_alphanumeric() {
                continue;
            }
            let mut end = self.text.len();
            for (offset, next) in self.chars.by_ref() {
                if !next.is_alphanumeric() {
                    end = offset;
                    break;
                }
            }
            let suffix = suffix_len(&self.text[end..]);
            if suffix > 0 {
                // Skip the suffix's characters after the first, which the
                // loop above consumed.
                for _ in 1..suffix {
                    self.chars.next();
                }
                end += suffix;
            }
            self.token.offset_from = start;
            self.token.offset_to = end;
            self.token.text.push_str(&self.text[start..end]);
            return true;
        }
        false
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// The words of a text as the index sees them before stemming: lower-cased
/// runs of alphanumerics, each with its closing `++` or `#`.
pub fn words(text: &str) -> Vec<String> {
    let mut tokenizer = CodeTokenizer::default();
    let mut stream = tokenizer.token_stream(text);
    let mut words = Vec::new();
    while stream.advance() {
        words.push(stream.token().text.to_lowercase());
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let mut analyzer = text_analyzer();
        let mut stream = analyzer.token_stream(text);
        let mut terms = Vec::new();
        while stream.advance() {
            terms.push(stream.token().text.clone());
        }
        terms
    }

    /// Snowball's English stems keep a word's first letter (not always its
    /// second: `dying` is `die`): words made of roots and every suffix the
    /// algorithm rewrites or removes, its exceptional forms, words of one
    /// to three letters, and words not in English.
    #[test]
    fn english_stems_keep_a_words_first_letter() {
        let roots = [
            "a", "i", "y", "ab", "eye", "yes", "gener", "commun", "univers", "arsen", "past",
            "sky", "happ", "rel", "cri", "tie", "agree", "feed", "hop", "lux", "ie", "ies", "ua",
            "oy", "zovo", "été", "naïv", "straße", "数据",
        ];
        let suffixes = [
            "", "s", "es", "ies", "ied", "sses", "ss", "us", "'s", "'", "s'", "eed", "eedly", "ed",
            "edly", "ing", "ingly", "y", "ly", "ational", "tional", "enci", "anci", "izer", "bli",
            "alli", "entli", "eli", "ousli", "ization", "ation", "ator", "alism", "aliti", "iviti",
            "biliti", "logi", "fulness", "ousness", "iveness", "icate", "ative", "alize", "iciti",
            "ical", "ful", "ness", "al", "ance", "ence", "er", "ic", "able", "ible", "ant",
            "ement", "ment", "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion", "sion",
            "tion", "e", "ll", "li", "ogi", "ably",
        ];
        let exceptional = [
            "skis",
            "skies",
            "dying",
            "lying",
            "tying",
            "idly",
            "gently",
            "ugly",
            "early",
            "only",
            "singly",
            "sky",
            "news",
            "howe",
            "atlas",
            "cosmos",
            "bias",
            "andes",
            "inning",
            "outing",
            "canning",
            "herring",
            "earring",
            "proceed",
            "exceed",
            "succeed",
            "generate",
            "generously",
            "communism",
            "universal",
            "arsenal",
            "gener",
        ];
        let mut words: Vec<String> = exceptional.iter().map(|word| word.to_string()).collect();
        for root in roots {
            for suffix in suffixes {
                words.push(format!("{root}{suffix}"));
            }
        }
        for word in words {
            let stem = stem_of(&word);
            assert_eq!(
                stem.as_bytes().first(),
                word.as_bytes().first(),
                "{word} -> {stem}"
            );
        }
    }

    /// The snippet analyzer finds a search's terms where the text analyzer
    /// does, at the same places, in words stemmed or not.
    #[test]
    fn the_snippet_analyzer_finds_the_terms_where_the_text_analyzer_does() {
        let text = "Generously, the generator generates general ideas; happily the happy \
                    skies dying in the sky. C++ and C# are not C. Cries, cried, crying; \
                    a I Y by yes été étés zovo zovos";
        let tokens = |mut analyzer: TextAnalyzer| {
            let mut stream = analyzer.token_stream(text);
            let mut tokens = Vec::new();
            while stream.advance() {
                let token = stream.token();
                tokens.push((token.offset_from, token.text.clone()));
            }
            tokens
        };
        let stemmed = tokens(text_analyzer());
        for terms in [
            vec!["gener"],
            vec!["happi", "sky"],
            vec!["die", "cri"],
            vec!["c++", "c#"],
            vec!["c"],
            vec!["été", "zovo"],
            vec!["y", "i"],
            vec![],
        ] {
            let terms: Vec<String> = terms.into_iter().map(String::from).collect();
            let snippet = tokens(snippet_analyzer(&terms));
            assert_eq!(snippet.len(), stemmed.len());
            let found = |tokens: &[(usize, String)]| -> Vec<usize> {
                tokens
                    .iter()
                    .filter(|(_, word)| terms.contains(word))
                    .map(|&(offset, _)| offset)
                    .collect()
            };
            assert_eq!(found(&snippet), found(&stemmed), "{terms:?}");
            if terms.len() > 1 {
                assert!(!found(&stemmed).is_empty(), "{terms:?} are in the text");
            }
        }
        // Words starting as no term does are left as they are.
        let unstemmed = tokens(snippet_analyzer(&["zovo".to_string()]));
        assert!(unstemmed.iter().any(|(_, word)| word == "generously"));
        // "zovos" stemmed.
        let zovo = unstemmed.iter().filter(|(_, word)| word == "zovo");
        assert_eq!(zovo.count(), 2);
    }

    /// The stems an analyzer gives `text`, read through it `passes` times.
    fn stems_of(analyzer: &mut TextAnalyzer, text: &str, passes: usize) -> Vec<String> {
        let mut stems = Vec::new();
        for _ in 0..passes {
            let mut stream = analyzer.token_stream(text);
            while stream.advance() {
                stems.push(stream.token().text.clone());
            }
        }
        stems
    }

    /// tantivy's stemmer, and ours remembering its stems, after the same
    /// tokenizer.
    fn plain_and_cached() -> (TextAnalyzer, TextAnalyzer) {
        use tantivy::tokenizer::{Language, SimpleTokenizer, Stemmer};
        let plain = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(Stemmer::new(Language::English))
            .build();
        let cached = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(CachedStemmer::default())
            .build();
        (plain, cached)
    }

    #[test]
    fn the_cached_stemmer_gives_tantivys_stems_again_and_again() {
        let text = "Running runners ran; the connections connected, connecting \
                    generously generalized generalizations. Running runners ran again, \
                    ÉCOLE écoles naïvely relational relativity";
        let (mut plain, mut cached) = plain_and_cached();
        // A short text (a query's): stemmed before any slot is set up.
        let expected = stems_of(&mut plain, text, 2);
        assert!(expected.contains(&"connect".to_string()));
        assert_eq!(stems_of(&mut cached, text, 2), expected);
        // A clone shares the thread's stems and stems the same.
        assert_eq!(stems_of(&mut cached.clone(), text, 2), expected);
    }

    /// Every analyzer on a thread shares its stems: streams of two, open
    /// at once and advanced in turn (a search's snippet window beside its
    /// snippet), each get their words' stems, before the slots are set up
    /// and after.
    #[test]
    fn streams_open_at_once_on_one_thread_stem_alike() {
        let mut text = String::new();
        for number in 0..(3 * WORDS_BEFORE_SLOTS) {
            text.push_str(&format!("connections{number} running generalized "));
        }
        let (mut plain, cached) = plain_and_cached();
        let expected = stems_of(&mut plain, &text, 1);
        let (mut first, mut second) = (cached.clone(), cached);
        let mut one = first.token_stream(&text);
        let mut other = second.token_stream(&text);
        let mut stems = (Vec::new(), Vec::new());
        while one.advance() {
            stems.0.push(one.token().text.clone());
            assert!(other.advance());
            stems.1.push(other.token().text.clone());
        }
        assert!(!other.advance());
        assert_eq!(stems.0, expected);
        assert_eq!(stems.1, expected);
    }

    #[test]
    fn remembered_stems_are_the_stemmers_through_evictions() {
        // More words than a cache has slots, so slots are taken again and
        // again, long words and short, each several times over.
        let roots = ["connect", "run", "general", "relat", "happi", "écol", "x"];
        let endings = ["", "ing", "ed", "ions", "ness", "ly", "izations", "ational"];
        let mut text = String::new();
        for round in 0..3 {
            for number in 0..(STEM_SLOTS / 8) {
                for root in roots {
                    let ending = endings[(number + round) % endings.len()];
                    text.push_str(&format!("{root}{ending} {root}{number}{ending} "));
                }
            }
            text.push_str("internationalizationsinternationalizations ");
        }
        let (mut plain, mut cached) = plain_and_cached();
        let expected = stems_of(&mut plain, &text, 1);
        assert!(expected.len() > 2 * STEM_SLOTS);
        assert_eq!(stems_of(&mut cached, &text, 1), expected);
    }

    #[test]
    fn languages_with_a_suffix_stay_apart() {
        assert_eq!(
            terms("C, C++ and C# (or F#); c++11"),
            ["c", "c++", "and", "c#", "or", "f#", "c", "11"]
        );
        // A fragment or a counter is not a language.
        assert_eq!(terms("page#section i++;"), ["page", "section", "i++"]);
        assert_eq!(terms("a+++b x##"), ["a", "b", "x"]);
        // Otherwise as en_stem: lower case, stems, long words dropped.
        assert_eq!(terms("Running HOSTS"), ["run", "host"]);
        assert!(terms(&"x".repeat(41)).is_empty());
    }

    #[test]
    fn offsets_cover_the_suffix() {
        let mut tokenizer = CodeTokenizer::default();
        let mut stream = tokenizer.token_stream("use C++ now");
        assert!(stream.advance());
        assert!(stream.advance());
        assert_eq!(
            (stream.token().offset_from, stream.token().offset_to),
            (4, 7)
        );
        assert!(stream.advance());
        assert_eq!(stream.token().text, "now");
        assert!(!stream.advance());
        assert_eq!(words("Über C#"), ["über", "c#"]);
    }
}
