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

use rustc_hash::FxHashMap;
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
        .filter(CachedStemmer)
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
        .filter(CachedStemmer)
        .build();
    index.tokenizers().register(TEXT_TOKENIZER, analyzer);
}

/// Words kept by a [`CachedStemmer`] before it starts afresh: a few MB.
const MOST_STEMS: usize = 1 << 16;

/// tantivy's English stemmer (`Stemmer::new(Language::English)`, the same
/// Snowball algorithm), remembering the stems it computed. Words repeat
/// (Zipf), and the stemmer was 7.5% of `index` on development crawl 1
/// (`perf`); a lookup costs a hash of the word. Each clone (tantivy clones
/// the analyzer for each indexing thread and each query) starts empty.
#[derive(Clone, Copy, Debug, Default)]
pub struct CachedStemmer;

impl TokenFilter for CachedStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> CachedStemmerFilter<T> {
        CachedStemmerFilter {
            inner: tokenizer,
            stems: FxHashMap::default(),
        }
    }
}

pub struct CachedStemmerFilter<T> {
    inner: T,
    stems: FxHashMap<Box<str>, Box<str>>,
}

impl<T: Clone> Clone for CachedStemmerFilter<T> {
    fn clone(&self) -> Self {
        CachedStemmerFilter {
            inner: self.inner.clone(),
            stems: FxHashMap::default(),
        }
    }
}

impl<T: Tokenizer> Tokenizer for CachedStemmerFilter<T> {
    type TokenStream<'a> = CachedStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemmerStream {
            tail: self.inner.token_stream(text),
            stems: &mut self.stems,
        }
    }
}

pub struct CachedStemmerStream<'a, S> {
    tail: S,
    stems: &'a mut FxHashMap<Box<str>, Box<str>>,
}

impl<S: TokenStream> TokenStream for CachedStemmerStream<'_, S> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if let Some(stem) = self.stems.get(token.text.as_str()) {
            token.text.clear();
            token.text.push_str(stem);
            return true;
        }
        let stem: Box<str> = frostem::Stemmer::new(frostem::Algorithm::English)
            .stem(&token.text)
            .into();
        if self.stems.len() >= MOST_STEMS {
            self.stems.clear();
        }
        self.stems.insert(token.text.as_str().into(), stem.clone());
        token.text.clear();
        token.text.push_str(&stem);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
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

    #[test]
    fn the_cached_stemmer_gives_tantivys_stems_again_and_again() {
        use tantivy::tokenizer::{Language, SimpleTokenizer, Stemmer};
        let text = "Running runners ran; the connections connected, connecting \
                    generously generalized generalizations. Running runners ran again, \
                    ÉCOLE écoles naïvely relational relativity";
        let stems = |analyzer: &mut TextAnalyzer| {
            let mut stems = Vec::new();
            // Twice through one analyzer: the second time from its cache.
            for _ in 0..2 {
                let mut stream = analyzer.token_stream(text);
                while stream.advance() {
                    stems.push(stream.token().text.clone());
                }
            }
            stems
        };
        let mut plain = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(Stemmer::new(Language::English))
            .build();
        let mut cached = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(CachedStemmer)
            .build();
        let expected = stems(&mut plain);
        assert!(expected.contains(&"connect".to_string()));
        assert_eq!(stems(&mut cached), expected);
        // A clone starts empty and stems the same.
        assert_eq!(stems(&mut cached.clone()), expected);
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
