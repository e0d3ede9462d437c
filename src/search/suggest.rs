//! "Did you mean": when a query finds little, each of its words that the
//! index does not know (or knows from a page or two) is replaced by the word
//! one edit away (a letter left out, added, changed, or two swapped:
//! Damerau's four mistakes, which make most typing errors) that the most
//! pages hold, when it is far more common. Candidates are looked up in the
//! index's own terms, stemmed as the index stems, so a suggestion always
//! finds pages, and is shown as typed (`hsot` becomes `host`, not its stem).
//!
//! The work is bounded: at most [`MAX_WORDS`] words of at most
//! [`LONGEST_WORD`] characters, each with about 75 candidates a character,
//! each one term lookup per segment.

use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Searcher, Term};

use super::Engine;
use crate::index::{self, IndexField};

/// Words of a query looked at.
const MAX_WORDS: usize = 8;
/// Longer words are left as they are (a hash, a path, a run of digits).
const LONGEST_WORD: usize = 24;
/// A candidate must be on this many times more pages than the word typed.
const MORE_COMMON: u64 = 10;
/// Letters tried in an insertion or a replacement, besides the word's own.
const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyz0123456789";

impl Engine {
    /// The corrected query, when some word of `query` has a far more common
    /// neighbour in the index.
    pub(super) fn suggest(&self, query: &str, searcher: &Searcher) -> Option<String> {
        let words = index::query_terms(query);
        if words.is_empty() || words.len() > MAX_WORDS {
            return None;
        }
        let mut analyzer = index::text_analyzer();
        let fields = self.index.fields();
        // The pages a word is found in: the field queries look words up in.
        let searched = fields.get(IndexField::Text);
        let mut pages = |word: &str| -> u64 {
            let Some(term) = stem(&mut analyzer, word) else {
                return 0;
            };
            searcher
                .doc_freq(&Term::from_field_text(searched, &term))
                .unwrap_or(0)
        };
        let mut changed = false;
        let mut corrected = Vec::with_capacity(words.len());
        for word in words {
            let length = word.chars().count();
            let eligible =
                (3..=LONGEST_WORD).contains(&length) && word.chars().all(char::is_alphabetic);
            if !eligible {
                corrected.push(word);
                continue;
            }
            let typed = pages(&word);
            let best = edits(&word)
                .into_iter()
                .map(|candidate| {
                    let count = pages(&candidate);
                    (count, candidate)
                })
                .filter(|(count, _)| *count > typed.saturating_mul(MORE_COMMON))
                // Most pages, then the first in alphabetical order.
                .max_by(|first, second| first.0.cmp(&second.0).then(second.1.cmp(&first.1)));
            match best {
                Some((_, candidate)) => {
                    changed = true;
                    corrected.push(candidate);
                }
                None => corrected.push(word),
            }
        }
        changed.then(|| corrected.join(" "))
    }
}

/// The index term of a word: its stem, as the index's text fields make it.
fn stem(analyzer: &mut TextAnalyzer, word: &str) -> Option<String> {
    let mut stream = analyzer.token_stream(word);
    if stream.advance() {
        Some(stream.token().text.clone())
    } else {
        None
    }
}

/// Every word one edit from `word`, without repeats (and without `word`).
fn edits(word: &str) -> Vec<String> {
    let letters: Vec<char> = word.chars().collect();
    let mut alphabet: Vec<char> = ALPHABET.chars().collect();
    for &letter in &letters {
        if !alphabet.contains(&letter) {
            alphabet.push(letter);
        }
    }
    let spelled = |letters: &[char]| letters.iter().collect::<String>();
    let mut candidates = Vec::new();
    for place in 0..letters.len() {
        let mut deleted = letters.clone();
        deleted.remove(place);
        candidates.push(spelled(&deleted));
        if place + 1 < letters.len() {
            let mut swapped = letters.clone();
            swapped.swap(place, place + 1);
            candidates.push(spelled(&swapped));
        }
        for &letter in &alphabet {
            let mut replaced = letters.clone();
            replaced[place] = letter;
            candidates.push(spelled(&replaced));
        }
    }
    for place in 0..=letters.len() {
        for &letter in &alphabet {
            let mut inserted = letters.clone();
            inserted.insert(place, letter);
            candidates.push(spelled(&inserted));
        }
    }
    candidates.sort_unstable();
    candidates.dedup();
    candidates.retain(|candidate| candidate != word && !candidate.is_empty());
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_cover_the_four_mistakes() {
        let candidates = edits("hsot");
        for expected in ["host", "hot", "hsoat", "hsok", "shot"] {
            assert!(
                candidates.iter().any(|candidate| candidate == expected),
                "{expected}"
            );
        }
        assert!(!candidates.iter().any(|candidate| candidate == "hsot"));
        // Two edits away is not offered.
        assert!(!candidates.iter().any(|candidate| candidate == "ghost"));
    }
}
