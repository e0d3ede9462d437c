//! A search's query in two parts: what a page must match, its words in the
//! text field ([`IndexField::Text`]), and what a page that matches gains
//! when its title, headings or URL path hold them.
//!
//! A page's score is the BM25 of the query's words in its text (own text,
//! title, headings and path as one field), plus twice their BM25 in its
//! title, once in its headings and half in its path, each field with its
//! own length and statistics: a title that names the query lifts a long
//! page as much as a short one. Most pages that match hold none of the
//! words in those three, so their score is the text's alone, which tantivy
//! can prune by its blocks' best scores; the few others are scored whole
//! ([`crate::search::pruned`]). Counting the pages that match reads the
//! text field alone, without a score.

use tantivy::query::{
    BooleanQuery, BoostQuery, EnableScoring, Occur, PhraseQuery, Query, TermQuery, Weight,
};
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

use super::schema::{Fields, IndexField};

/// How much a word weighs in the title, against 1 in the headings.
const TITLE_BOOST: f32 = 2.0;

/// How much a word weighs in the URL's path, against 1 in the headings.
const PATH_BOOST: f32 = 0.5;

/// The fields of the bonus, each with its weight.
const BONUS_FIELDS: [(IndexField, f32); 3] = [
    (IndexField::Title, TITLE_BOOST),
    (IndexField::Headings, 1.0),
    (IndexField::Path, PATH_BOOST),
];

/// A search's query: [`SearchQuery::matching`], scored with
/// [`SearchQuery::bonus`] added. As a tantivy [`Query`], it matches what
/// `matching` matches; with scores, each is the sum of both parts'.
#[derive(Debug)]
pub struct SearchQuery {
    /// What a page must match, scored by its words in the text field.
    pub matching: Box<dyn Query>,
    /// The words and phrases `matching` looks up in the text field, each
    /// looked up in each of [`BONUS_FIELDS`], weighed, any of them: what a
    /// matching page's title, headings and path add to its score. `None`
    /// when `matching` has no word in the text field.
    pub bonus: Option<Box<dyn Query>>,
}

impl Clone for SearchQuery {
    fn clone(&self) -> Self {
        SearchQuery {
            matching: self.matching.box_clone(),
            bonus: self.bonus.as_ref().map(|bonus| bonus.box_clone()),
        }
    }
}

impl SearchQuery {
    /// `matching`, with the bonus of its words and phrases in the text
    /// field ([`bonus_parts`]).
    pub fn new(matching: Box<dyn Query>, fields: &Fields) -> SearchQuery {
        let mut parts = Vec::new();
        bonus_parts(&*matching, fields, &mut parts);
        let bonus = (!parts.is_empty()).then(|| {
            let clauses = parts.into_iter().map(|part| (Occur::Should, part));
            Box::new(BooleanQuery::new(clauses.collect())) as Box<dyn Query>
        });
        SearchQuery { matching, bonus }
    }

    /// The same query matching `matching` instead (its own narrowed by
    /// filters), with the same bonus.
    pub fn matching_instead(&self, matching: Box<dyn Query>) -> SearchQuery {
        SearchQuery {
            matching,
            bonus: self.bonus.as_ref().map(|bonus| bonus.box_clone()),
        }
    }

    /// The whole query, as one tantivy query: `matching` required, `bonus`
    /// optional (tantivy adds the scores of the clauses a page matches).
    fn whole(&self) -> Box<dyn Query> {
        match &self.bonus {
            Some(bonus) => Box::new(BooleanQuery::new(vec![
                (Occur::Must, self.matching.box_clone()),
                (Occur::Should, bonus.box_clone()),
            ])),
            None => self.matching.box_clone(),
        }
    }
}

impl Query for SearchQuery {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        if scoring.is_scoring_enabled() {
            self.whole().weight(scoring)
        } else {
            // Without scores, the bonus changes nothing.
            self.matching.weight(scoring)
        }
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        self.matching.query_terms(visitor);
    }
}

/// The parts of the bonus of `query`: each word (a term query) and each
/// phrase it looks up in the text field, but those it excludes, as the same
/// query in each of [`BONUS_FIELDS`], weighed. Where the text field's words
/// came from several fields, each word was a union of its fields' and a
/// page scored by each field that held it: this is the part the title, the
/// headings and the path added. Other queries (ranges, prefixes, fuzzy
/// words, site chrome) add nothing.
fn bonus_parts(query: &dyn Query, fields: &Fields, parts: &mut Vec<Box<dyn Query>>) {
    let text = fields.get(IndexField::Text);
    // The same words in `field`.
    let moved = |terms: &[Term], field: IndexField| -> Option<Vec<Term>> {
        terms
            .iter()
            .map(|term| {
                let value = term.value();
                Some(Term::from_field_text(fields.get(field), value.as_str()?))
            })
            .collect()
    };
    let mut push = |terms: Vec<Term>| {
        if terms.is_empty() || terms.iter().any(|term| term.field() != text) {
            return;
        }
        for (field, weight) in BONUS_FIELDS {
            let Some(terms) = moved(&terms, field) else {
                return;
            };
            let looked_up: Box<dyn Query> = match <[Term; 1]>::try_from(terms) {
                Ok([term]) => Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                Err(terms) => Box::new(PhraseQuery::new(terms)),
            };
            parts.push(if weight == 1.0 {
                looked_up
            } else {
                Box::new(BoostQuery::new(looked_up, weight))
            });
        }
    };
    if let Some(boolean) = query.downcast_ref::<BooleanQuery>() {
        for (occur, clause) in boolean.clauses() {
            if *occur != Occur::MustNot {
                bonus_parts(&**clause, fields, parts);
            }
        }
    } else if let Some(word) = query.downcast_ref::<TermQuery>() {
        push(vec![word.term().clone()]);
    } else if let Some(phrase) = query.downcast_ref::<PhraseQuery>() {
        push(phrase.phrase_terms());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{schema, PageDocument, NONE};
    use crate::pages::PageId;
    use tantivy::collector::{Count, TopDocs};
    use tantivy::{Index, Searcher};

    /// An index of pages (title, headings, body, URL), in memory.
    fn index_of(pages: &[(&str, &str, &str, &str)]) -> (Searcher, Fields) {
        let (schema, fields) = schema::build();
        let index = Index::create_in_ram(schema);
        index
            .tokenizers()
            .register(crate::index::TEXT_TOKENIZER, crate::index::text_analyzer());
        let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        for (number, &(title, headings, body, url)) in pages.iter().enumerate() {
            writer
                .add_document(fields.document(&PageDocument {
                    page: PageId(number as u32),
                    collection: NONE,
                    cluster: NONE,
                    replication: 1,
                    inlinks_from_other_hosts: 0,
                    host_id: 0,
                    lineage: NONE,
                    lineage_copy: 0,
                    kind: 0,
                    manual_page: NONE,
                    title,
                    body,
                    headings,
                    chrome: "",
                    url,
                    host: "",
                }))
                .unwrap();
        }
        writer.commit().unwrap();
        (index.reader().unwrap().searcher(), fields)
    }

    fn word(fields: &Fields, field: IndexField, word: &str) -> Box<dyn Query> {
        Box::new(TermQuery::new(
            Term::from_field_text(fields.get(field), word),
            IndexRecordOption::WithFreqs,
        ))
    }

    /// The pages found, best first, by page number.
    fn ranked(searcher: &Searcher, query: &SearchQuery) -> Vec<(u32, Score)> {
        searcher
            .search(query, &TopDocs::with_limit(10).order_by_score())
            .unwrap()
            .into_iter()
            .map(|(score, address)| (address.doc_id, score))
            .collect()
    }

    use tantivy::Score;

    #[test]
    fn the_bonus_is_the_query_in_the_title_headings_and_path() {
        let filler = "some words that say little about anything in particular";
        let (searcher, fields) = index_of(&[
            // 0: the word in its text only.
            (
                "a page",
                "usage",
                &format!("rewrite {filler}"),
                "https://h.example/a.html",
            ),
            // 1: in its title too.
            (
                "rewrite",
                "usage",
                &format!("rewrite {filler}"),
                "https://h.example/b.html",
            ),
            // 2: in its headings too.
            (
                "a page",
                "rewrite",
                &format!("rewrite {filler}"),
                "https://h.example/c.html",
            ),
            // 3: in its path too.
            (
                "a page",
                "usage",
                &format!("rewrite {filler}"),
                "https://h.example/rewrite.html",
            ),
            // 4: in its title, and an excluded word in its text.
            (
                "rewrite",
                "usage",
                &format!("rewrite proxy {filler}"),
                "https://h.example/d.html",
            ),
        ]);
        let matching: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
            (Occur::Must, word(&fields, IndexField::Text, "rewrit")),
            (Occur::MustNot, word(&fields, IndexField::Text, "proxi")),
        ]));
        let query = SearchQuery::new(matching, &fields);
        // The excluded word adds nothing: one word, in three fields.
        let bonus = query.bonus.as_ref().unwrap();
        let boolean = bonus.downcast_ref::<BooleanQuery>().unwrap();
        assert_eq!(boolean.clauses().len(), 3);
        let ranked = ranked(&searcher, &query);
        let order: Vec<u32> = ranked.iter().map(|&(page, _)| page).collect();
        // Title (x2), headings (x1), path (x0.5), then the text alone.
        assert_eq!(order, vec![1, 2, 3, 0], "{ranked:?}");
        // Counted, the bonus matches nothing more.
        assert_eq!(searcher.search(&query, &Count).unwrap(), 4);
        // The text alone gives the page without a bonus its score.
        let text_only = searcher
            .search(&query.matching, &TopDocs::with_limit(10).order_by_score())
            .unwrap();
        let of_page_0 = |found: &[(Score, tantivy::DocAddress)]| {
            found
                .iter()
                .find(|(_, address)| address.doc_id == 0)
                .map(|&(score, _)| score)
        };
        assert_eq!(
            of_page_0(&text_only),
            ranked.last().map(|&(_, score)| score)
        );
    }

    #[test]
    fn a_phrase_adds_only_where_it_is_a_phrase() {
        let (searcher, fields) = index_of(&[
            (
                "virtual host",
                "",
                "virtual host",
                "https://h.example/a.html",
            ),
            (
                "host virtual",
                "",
                "virtual host",
                "https://h.example/b.html",
            ),
        ]);
        let phrase = PhraseQuery::new(vec![
            Term::from_field_text(fields.get(IndexField::Text), "virtual"),
            Term::from_field_text(fields.get(IndexField::Text), "host"),
        ]);
        let query = SearchQuery::new(Box::new(phrase), &fields);
        let whole = ranked(&searcher, &query);
        let text_only: Vec<(u32, Score)> = searcher
            .search(&query.matching, &TopDocs::with_limit(10).order_by_score())
            .unwrap()
            .into_iter()
            .map(|(score, address)| (address.doc_id, score))
            .collect();
        let score = |found: &[(u32, Score)], page: u32| {
            found
                .iter()
                .find(|&&(at, _)| at == page)
                .map(|&(_, score)| score)
        };
        assert_eq!(whole.len(), 2);
        assert!(
            score(&whole, 0) > score(&text_only, 0),
            "{whole:?} {text_only:?}"
        );
        assert_eq!(
            score(&whole, 1),
            score(&text_only, 1),
            "words, not the phrase"
        );
    }

    #[test]
    fn a_host_s_name_finds_no_page_but_its_path_does() {
        let (searcher, fields) = index_of(&[
            (
                "a page",
                "",
                "some text",
                "https://docs.mirror.example/guide/page.html",
            ),
            (
                "a page",
                "",
                "some text",
                "https://docs.example/mirror/page.html",
            ),
        ]);
        let query = SearchQuery::new(word(&fields, IndexField::Text, "mirror"), &fields);
        let ranked = ranked(&searcher, &query);
        assert_eq!(
            ranked.iter().map(|&(page, _)| page).collect::<Vec<_>>(),
            vec![1]
        );
    }

    #[test]
    fn words_outside_the_text_field_add_nothing() {
        let (_, fields) = index_of(&[]);
        let query = SearchQuery::new(word(&fields, IndexField::Chrome, "menu"), &fields);
        assert!(query.bonus.is_none());
    }
}
