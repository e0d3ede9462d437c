//! A page's fingerprint: computed once at ingest from the extracted text,
//! kept in the crawl's captures and in every generation.
//!
//! - `text_signature`: the words of the page (maximal runs of alphanumeric
//!   characters, lower-cased) in order; markup, whitespace, punctuation and
//!   case are gone, so content-equivalent pages (bharat-broder-1999 §2,
//!   level 2) share it.
//! - `echo_signature`: the same words with the page's own path taken out
//!   where the text says it whole: a soft 404 that names the path it was asked for ("The page
//!   /guide/x.html was not found") has one echo signature at every URL,
//!   though no two of its answers share bytes or words. Equal to
//!   `text_signature` on a page that does not say its path.
//! - `lines`: one hash per line of text that has a word (cho-2000 §2.1); line
//!   ends, spacing, case and punctuation do not change a line's hash, so a
//!   CRLF copy or a re-encoded copy has the same lines.
//! - `minhash`: fetterly-2004 §2. The words are cut into 5-word shingles,
//!   wrapping at the end so that every word starts one; each shingle is hashed
//!   to a 64-bit pre-image, and 84 functions of a multiply-add family map each
//!   pre-image to an image; the page keeps, for each function, the smallest
//!   image. Two pages agree on one function with probability equal to the
//!   resemblance of their shingle sets.
//!
//! The functions: `h_i(x) = a_i * lo(x) + b_i * hi(x) + c_i mod 2^32` with odd
//! `a_i`, `b_i` from a fixed seed, where `lo` and `hi` are the halves of the
//! 64-bit pre-image. Unlike the paper's Rabin fingerprints they map 64 bits to
//! 32 (one-to-one only in either half with the other fixed), but the 84 of
//! them run as 32-bit vector lanes (AVX2 when the processor has it, chosen at
//! run time), and the statistical tests in this module check that agreement
//! follows the resemblance as the paper's arithmetic says. The page keeps
//! the smallest images rather than their pre-images (a stated divergence from
//! the paper): two pages' images agree when their pre-images do, and
//! otherwise only by coincidence (two different shingles tying at the minimum,
//! about n / 2^33 for an n-shingle page), at half the space.

mod spill;
pub use spill::{FingerprintSpill, SpillError, Spilled, SpilledFingerprints};

use std::collections::HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_128, xxh3_64_with_seed};

/// Words per shingle (fetterly-2004 §2).
pub const SHINGLE_WORDS: usize = 5;
/// Min-hash functions per page.
pub const MINHASH_FUNCTIONS: usize = 84;
/// Supershingles per page, each of `SUPERSHINGLE_WIDTH` adjacent min-hashes.
pub const SUPERSHINGLES: usize = 6;
pub const SUPERSHINGLE_WIDTH: usize = 14;
/// Pairs of supershingles: C(6, 2).
pub const MEGASHINGLES: usize = 15;

/// What the similarity stage needs to know of a page's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Hash of the page's words in order (content equivalence).
    pub text_signature: u128,
    /// Hash of the page's words in order once the words of its own path
    /// are taken out where it says them (the module's documentation).
    pub echo_signature: u128,
    /// Number of words.
    pub words: u32,
    /// Hash of each line that has a word, in order.
    pub lines: Vec<u64>,
    /// The 84 smallest images; empty when the page has no word.
    pub minhash: Vec<u32>,
}

impl Fingerprint {
    /// Fingerprints a page from its title and its extracted text (lines
    /// separated by `\n`). The title counts as the first line.
    pub fn of_page(title: &str, text: &str) -> Fingerprint {
        Fingerprint::of_page_at(None, title, text)
    }

    /// Fingerprints a page served at `path` (its URL's path, [`crate::pages::url_path`]):
    /// as [`Fingerprint::of_page`], with the echo signature of that path.
    pub fn of_page_at(path: Option<&str>, title: &str, text: &str) -> Fingerprint {
        let mut words = Vec::new();
        let mut lines = Vec::new();
        tokenize(title, &mut words, &mut lines);
        tokenize(text, &mut words, &mut lines);
        let mut fingerprint = Fingerprint::from_words(&words, lines);
        if let Some(path) = path {
            let mut path_words = Vec::new();
            tokenize(path, &mut path_words, &mut Vec::new());
            if let Some(echoed) = without_echo(&words, &path_words) {
                fingerprint.echo_signature = signature(&echoed);
            }
        }
        fingerprint
    }

    /// Fingerprints a text without a title.
    pub fn of_text(text: &str) -> Fingerprint {
        Fingerprint::of_page("", text)
    }

    fn from_words(words: &[u64], lines: Vec<u64>) -> Fingerprint {
        let text_signature = signature(words);
        let minhash = if words.is_empty() {
            Vec::new()
        } else {
            let shingles = shingle_preimages(words);
            min_images(&shingles).to_vec()
        };
        Fingerprint {
            text_signature,
            echo_signature: text_signature,
            words: words.len() as u32,
            lines,
            minhash,
        }
    }

    /// True when the page has words, hence min-hashes.
    pub fn has_minhash(&self) -> bool {
        self.minhash.len() == MINHASH_FUNCTIONS
    }

    /// Estimated resemblance of the two pages' shingle sets: the share of the
    /// 84 functions on which they agree. `None` when either has no word.
    pub fn resemblance(&self, other: &Fingerprint) -> Option<f64> {
        minhash_resemblance(&self.minhash, &other.minhash)
    }

    /// The six supershingles: each a hash of 14 adjacent min-hashes.
    pub fn supershingles(&self) -> Option<[u64; SUPERSHINGLES]> {
        if !self.has_minhash() {
            return None;
        }
        Some(supershingles_of(&self.minhash))
    }

    /// The 15 megashingles, one per pair of supershingles (lesser first), in
    /// the order (0,1), (0,2) ... (4,5). Slot `i` of two pages may only be
    /// compared with slot `i` (fetterly-2004 §2, footnote a).
    pub fn megashingles(&self) -> Option<[u64; MEGASHINGLES]> {
        let supers = self.supershingles()?;
        Some(megashingles_of(&supers))
    }

    /// The hashes of the page's chunks of `lines_per_chunk` consecutive lines
    /// (the last chunk may be shorter), sorted and without repeats; of a page
    /// with more than `most` of them, the `most` smallest.
    ///
    /// The smallest hashes are a consistent sample (Broder's bottom-k
    /// sketch): two copies of one long text keep the same chunks, and a chunk
    /// two texts share is kept by both when it is among either's smallest,
    /// so the share of chunks two long texts have in common is estimated
    /// without holding each of their lines in the chunk table. It bounds what
    /// one page of hundreds of thousands of lines costs the similarity stage;
    /// a documentation page has far fewer.
    pub fn chunks(&self, lines_per_chunk: usize, most: usize) -> Vec<u64> {
        let per_chunk = lines_per_chunk.max(1);
        let mut chunks: Vec<u64> = self
            .lines
            .chunks(per_chunk)
            .map(|lines| chunk_hash(lines, per_chunk))
            .collect();
        chunks.sort_unstable();
        chunks.dedup();
        chunks.truncate(most);
        chunks
    }
}

/// Where a reader finds pages' fingerprints: all of them in memory (the
/// similarity stage's `Vec`, by page id), or a generation's file, read a
/// block at a time (`crate::generation::FingerprintFile`, whose reads fail
/// with its `Error`).
pub trait Fingerprints {
    /// Why a read failed (`Infallible` in memory).
    type Error;

    /// Calls `visit` once with each distinct page of `pages` (page ids) and
    /// its fingerprint (`None` for a page without a body), in an order of
    /// its own. A page past the end is visited with `None`.
    fn visit(
        &self,
        pages: &[usize],
        visit: &mut dyn FnMut(usize, Option<&Fingerprint>),
    ) -> Result<(), Self::Error>;

    /// Pages there is a fingerprint (or `None`) for.
    fn page_count(&self) -> usize;

    /// `map` of each page of `pages` (page ids, in ascending order) and its
    /// fingerprint (`None` past the end), computed in parallel, in the
    /// order of `pages`. The file decodes each of its blocks once.
    fn map_pages<R: Send>(
        &self,
        pages: &[usize],
        map: impl Fn(usize, Option<&Fingerprint>) -> R + Sync,
    ) -> Result<Vec<R>, Self::Error>
    where
        Self: Sized;

    /// The fingerprints of `pages`, in their order.
    fn of_pages(&self, pages: &[usize]) -> Result<Vec<Option<Fingerprint>>, Self::Error> {
        let mut found: HashMap<usize, Option<Fingerprint>> = HashMap::with_capacity(pages.len());
        self.visit(pages, &mut |page, fingerprint| {
            found.insert(page, fingerprint.cloned());
        })?;
        Ok(pages
            .iter()
            .map(|page| found.get(page).cloned().flatten())
            .collect())
    }
}

impl Fingerprints for Vec<Option<Fingerprint>> {
    type Error = std::convert::Infallible;

    fn page_count(&self) -> usize {
        self.len()
    }

    fn map_pages<R: Send>(
        &self,
        pages: &[usize],
        map: impl Fn(usize, Option<&Fingerprint>) -> R + Sync,
    ) -> Result<Vec<R>, Self::Error> {
        Ok(pages
            .par_iter()
            .map(|&page| map(page, self.get(page).and_then(Option::as_ref)))
            .collect())
    }

    fn visit(
        &self,
        pages: &[usize],
        visit: &mut dyn FnMut(usize, Option<&Fingerprint>),
    ) -> Result<(), Self::Error> {
        let mut distinct = pages.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        for page in distinct {
            visit(page, self.get(page).and_then(Option::as_ref));
        }
        Ok(())
    }
}

/// [`Fingerprint::resemblance`] of two pages' min-hashes
/// ([`Fingerprint::minhash`]). `None` when either has no word.
pub fn minhash_resemblance(first: &[u32], second: &[u32]) -> Option<f64> {
    if first.len() != MINHASH_FUNCTIONS || second.len() != MINHASH_FUNCTIONS {
        return None;
    }
    let agreeing = first.iter().zip(second).filter(|(a, b)| a == b).count();
    Some(agreeing as f64 / MINHASH_FUNCTIONS as f64)
}

/// The hash of one chunk of `per_chunk` consecutive line hashes (the last
/// chunk of a text may hold fewer): the line's own hash for one-line chunks.
pub fn chunk_hash(lines: &[u64], per_chunk: usize) -> u64 {
    if per_chunk <= 1 {
        return lines[0];
    }
    let mut hash = per_chunk as u64;
    for line in lines {
        hash = (hash ^ line).wrapping_mul(COMBINE).rotate_left(31);
    }
    fmix64(hash)
}

/// The hash [`Fingerprint::lines`] gives each line of `text` (its parts
/// between `\n`s, as `text.split('\n')` gives them), in order, `None` for
/// a line without a word (no line of the fingerprint): one pass over the
/// text, where hashing it line by line set up two vectors a line.
pub fn line_hashes(text: &str) -> Vec<Option<u64>> {
    let mut hashes = Vec::new();
    hash_words(text, |_| {}, |line| hashes.push(line));
    hashes
}

const COMBINE: u64 = 0x9E37_79B9_7F4A_7C15;
const WORD_SEED: u64 = 0xCBF2_9CE4_8422_2325;
const WORD_PRIME: u64 = 0x0000_0100_0000_01B3;

/// MurmurHash3's 64-bit finaliser: every input bit affects every output bit.
fn fmix64(mut value: u64) -> u64 {
    value ^= value >> 33;
    value = value.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    value ^= value >> 33;
    value = value.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    value ^ (value >> 33)
}

/// The hash of words in order.
fn signature(words: &[u64]) -> u128 {
    let mut bytes = Vec::with_capacity(words.len() * 8);
    for word in words {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    xxh3_128(&bytes)
}

/// `words` without every run of `path`'s words (the whole path: a page
/// naming only its file, as a redirect stub names its target, does not echo
/// the request); `None` when it holds none.
fn without_echo(words: &[u64], path: &[u64]) -> Option<Vec<u64>> {
    let (first, last) = (path.first()?, path.last()?);
    if !words.contains(first) || !words.contains(last) {
        return None;
    }
    let mut kept = Vec::with_capacity(words.len());
    let mut index = 0;
    let mut found = false;
    while index < words.len() {
        if words[index..].starts_with(path) {
            index += path.len();
            found = true;
        } else {
            kept.push(words[index]);
            index += 1;
        }
    }
    found.then_some(kept)
}

/// Appends the hash of every word of `text` to `words`, and the hash of every
/// line with at least one word to `lines`. A word is a maximal run of
/// alphanumeric characters, lower-cased.
fn tokenize(text: &str, words: &mut Vec<u64>, lines: &mut Vec<u64>) {
    hash_words(
        text,
        |word| words.push(word),
        |line| {
            if let Some(hash) = line {
                lines.push(hash);
            }
        },
    );
}

/// Gives `on_word` the hash of every word of `text` (a maximal run of
/// alphanumeric characters, lower-cased) and `on_line` the hash of every
/// line at its end (each `\n`, and the text's end), `None` for a line
/// without a word.
fn hash_words(text: &str, mut on_word: impl FnMut(u64), mut on_line: impl FnMut(Option<u64>)) {
    let mut word: Option<u64> = None;
    let mut line: Option<u64> = None;
    let mut end_word = |word: &mut Option<u64>, line: &mut Option<u64>| {
        if let Some(hash) = word.take() {
            let hash = fmix64(hash);
            on_word(hash);
            let state = line.unwrap_or(WORD_SEED);
            *line = Some((state ^ hash).wrapping_mul(COMBINE).rotate_left(27));
        }
    };
    for character in text.chars() {
        if character.is_ascii() {
            if character.is_ascii_alphanumeric() {
                let lower = character.to_ascii_lowercase() as u64;
                let state = word.unwrap_or(WORD_SEED);
                word = Some((state ^ lower).wrapping_mul(WORD_PRIME));
                continue;
            }
            end_word(&mut word, &mut line);
            if character == '\n' {
                on_line(line.take().map(fmix64));
            }
        } else if character.is_alphanumeric() {
            for lower in character.to_lowercase() {
                let state = word.unwrap_or(WORD_SEED);
                word = Some((state ^ lower as u64).wrapping_mul(WORD_PRIME));
            }
        } else {
            end_word(&mut word, &mut line);
        }
    }
    end_word(&mut word, &mut line);
    on_line(line.take().map(fmix64));
}

/// One pre-image per word: the hash of the 5 words starting there, wrapping
/// around at the end of the text.
fn shingle_preimages(words: &[u64]) -> Vec<u64> {
    let count = words.len();
    (0..count)
        .map(|start| {
            let mut hash = WORD_SEED;
            for offset in 0..SHINGLE_WORDS {
                hash = (hash ^ words[(start + offset) % count])
                    .wrapping_mul(COMBINE)
                    .rotate_left(29);
            }
            fmix64(hash)
        })
        .collect()
}

/// The 84 functions' coefficients, from a fixed seed (splitmix64).
struct HashFamily {
    low: [u32; MINHASH_FUNCTIONS],
    high: [u32; MINHASH_FUNCTIONS],
    add: [u32; MINHASH_FUNCTIONS],
}

const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut value = state;
    value = (value ^ (value >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, value ^ (value >> 31))
}

const fn hash_family() -> HashFamily {
    let mut family = HashFamily {
        low: [0; MINHASH_FUNCTIONS],
        high: [0; MINHASH_FUNCTIONS],
        add: [0; MINHASH_FUNCTIONS],
    };
    let mut state = 0x6D69_7272_6F72_7363; // "mirrorsc"
    let mut index = 0;
    while index < MINHASH_FUNCTIONS {
        let (next, first) = splitmix64(state);
        let (next, second) = splitmix64(next);
        state = next;
        family.low[index] = (first as u32) | 1;
        family.high[index] = ((first >> 32) as u32) | 1;
        family.add[index] = second as u32;
        index += 1;
    }
    family
}

static FAMILY: HashFamily = hash_family();

#[inline(always)]
fn min_images_portable(shingles: &[u64]) -> [u32; MINHASH_FUNCTIONS] {
    let family = &FAMILY;
    let mut minimum = [u32::MAX; MINHASH_FUNCTIONS];
    for &shingle in shingles {
        let low = shingle as u32;
        let high = (shingle >> 32) as u32;
        for (index, slot) in minimum.iter_mut().enumerate() {
            let image = family.low[index]
                .wrapping_mul(low)
                .wrapping_add(family.high[index].wrapping_mul(high))
                .wrapping_add(family.add[index]);
            *slot = (*slot).min(image);
        }
    }
    minimum
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn min_images_avx2(shingles: &[u64]) -> [u32; MINHASH_FUNCTIONS] {
    min_images_portable(shingles)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn min_images_avx512(shingles: &[u64]) -> [u32; MINHASH_FUNCTIONS] {
    min_images_portable(shingles)
}

/// For each of the 84 functions, the smallest image of the shingles.
fn min_images(shingles: &[u64]) -> [u32; MINHASH_FUNCTIONS] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the processor supports AVX-512F, checked just above.
            return unsafe { min_images_avx512(shingles) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor supports AVX2, checked just above.
            return unsafe { min_images_avx2(shingles) };
        }
    }
    min_images_portable(shingles)
}

fn supershingles_of(minhash: &[u32]) -> [u64; SUPERSHINGLES] {
    let mut supers = [0u64; SUPERSHINGLES];
    for (index, group) in minhash.chunks(SUPERSHINGLE_WIDTH).enumerate() {
        let mut bytes = [0u8; SUPERSHINGLE_WIDTH * 4];
        for (slot, value) in group.iter().enumerate() {
            bytes[slot * 4..slot * 4 + 4].copy_from_slice(&value.to_le_bytes());
        }
        supers[index] = xxh3_64_with_seed(&bytes, index as u64);
    }
    supers
}

fn megashingles_of(supers: &[u64; SUPERSHINGLES]) -> [u64; MEGASHINGLES] {
    let mut megas = [0u64; MEGASHINGLES];
    let mut slot = 0;
    for first in 0..SUPERSHINGLES {
        for second in first + 1..SUPERSHINGLES {
            let mut bytes = [0u8; 16];
            bytes[..8].copy_from_slice(&supers[first].to_le_bytes());
            bytes[8..].copy_from_slice(&supers[second].to_le_bytes());
            megas[slot] = xxh3_64_with_seed(&bytes, slot as u64);
            slot += 1;
        }
    }
    megas
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_has_the_fingerprints_hash_of_it_and_a_wordless_line_none() {
        let title = "Logging — Apache Tomcat";
        let text = "Logging in Tomcat\n\n  --  \nThe ÉTÉ of java.util.logging\nlast";
        let fingerprint = Fingerprint::of_page(title, text);
        let hashes = line_hashes(text);
        assert_eq!(hashes.len(), text.split('\n').count());
        assert_eq!(hashes[1], None);
        assert_eq!(hashes[2], None);
        let lines: Vec<u64> = line_hashes(title)
            .into_iter()
            .chain(hashes.iter().copied())
            .flatten()
            .collect();
        assert_eq!(lines, fingerprint.lines);
        // A line's hash does not depend on the lines around it, nor does
        // case.
        assert_eq!(line_hashes("x\nthe été of JAVA.util.logging")[1], hashes[3]);
        assert_eq!(line_hashes(""), vec![None]);
    }

    #[test]
    fn a_soft_404_naming_the_path_it_was_asked_has_one_echo_signature() {
        let answer = |path: &str| {
            Fingerprint::of_page_at(
                Some(path),
                "Page not found",
                &format!("The page {path} was not found on this server.\nCheck the address."),
            )
        };
        let (one, two) = (
            answer("/guide/alpha.html"),
            answer("/guide/beta-gamma.html"),
        );
        assert_ne!(one.text_signature, two.text_signature);
        assert_eq!(one.echo_signature, two.echo_signature);
        // Naming the whole URL echoes too.
        let named = |path: &str, said: &str| {
            Fingerprint::of_page_at(Some(path), "", &format!("No page {said} here."))
        };
        assert_eq!(
            named("/a/x.html", "http://docs.example.org/a/x.html").echo_signature,
            named("/b/yz.html", "http://docs.example.org/b/yz.html").echo_signature
        );
        // A page naming only its file does not echo the request: a redirect
        // stub names its target, whose file name is often its own.
        let stub = |path: &str, target: &str| {
            Fingerprint::of_page_at(Some(path), "", &format!("Redirecting to {target}"))
        };
        assert_ne!(
            stub(
                "/std/io/buffered/struct.BufReader.html",
                "../struct.BufReader.html"
            )
            .echo_signature,
            stub(
                "/std/sync/barrier/struct.Barrier.html",
                "../struct.Barrier.html"
            )
            .echo_signature
        );
        // A page that does not say its path keeps its text signature, and
        // two pages differing in more than their paths stay apart.
        let page = Fingerprint::of_page_at(Some("/guide/alpha.html"), "Guide", "How to start.");
        assert_eq!(page.echo_signature, page.text_signature);
        let other = Fingerprint::of_page_at(
            Some("/guide/beta.html"),
            "Page not found",
            "The page /guide/beta.html is gone: see the index.",
        );
        assert_ne!(other.echo_signature, one.echo_signature);
        // A word of the path alone (`html`, `guide`) is no echo.
        let words = Fingerprint::of_page_at(Some("/guide/alpha.html"), "", "An html guide.");
        assert_eq!(words.echo_signature, words.text_signature);
    }

    fn words_of(text: &str) -> Vec<u64> {
        let mut words = Vec::new();
        tokenize(text, &mut words, &mut Vec::new());
        words
    }

    #[test]
    fn pinned_values_of_a_fixed_text() {
        let text = "The Apache HTTP Server Project\nis an effort to develop and maintain\n\nan open-source HTTP server.";
        let fingerprint = Fingerprint::of_text(text);
        assert_eq!(fingerprint.words, 17);
        assert_eq!(fingerprint.lines.len(), 3);
        assert_eq!(
            (fingerprint.text_signature, fingerprint.lines.clone()),
            (
                0xe44c1ed71c5a6b4e159909b8d8ca450f,
                vec![0x93e4ce26d02737f5, 0x1473ce1adcf09776, 0x9552d38aff9aeb28],
            )
        );
        assert_eq!(
            &fingerprint.minhash[..4],
            &[368466387, 139055980, 121577746, 795187673]
        );
        assert_eq!(fingerprint.supershingles().unwrap()[0], 0xc394bec30b2560ad);
        assert_eq!(fingerprint.megashingles().unwrap()[14], 0x46475e3bc8fbb594);
        assert_eq!(
            fingerprint.chunks(2, usize::MAX),
            vec![0x8552585c193f9462, 0xbabf8f44f3a8d336]
        );
        // Fixed across builds and machines: the vector and portable kernels agree.
        assert_eq!(
            min_images_portable(&shingle_preimages(&words_of(text))).to_vec(),
            fingerprint.minhash
        );
    }

    #[test]
    fn words_ignore_case_markup_spacing_and_punctuation() {
        assert_eq!(words_of("Hello, World!"), words_of("hello   world"));
        assert_eq!(words_of("naïve café"), words_of("NAÏVE CAFÉ"));
        assert_ne!(words_of("hello world"), words_of("world hello"));
        assert_eq!(words_of("open-source").len(), 2);
        let lf = Fingerprint::of_text("one line\ntwo lines\n");
        let crlf = Fingerprint::of_text("one line\r\ntwo  lines\r\n");
        assert_eq!(lf, crlf);
    }

    #[test]
    fn every_word_starts_one_shingle_wrapping_at_the_end() {
        let words = words_of("a b c d e f g");
        let shingles = shingle_preimages(&words);
        assert_eq!(shingles.len(), 7);
        // The shingle starting at "f" is "f g a b c": the same as in a text
        // that really reads "f g a b c".
        let wrapped = shingle_preimages(&words_of("f g a b c"));
        assert_eq!(shingles[5], wrapped[0]);
        // A one-word text still has a shingle, hence min-hashes.
        assert!(Fingerprint::of_text("word").has_minhash());
        assert!(!Fingerprint::of_text(" -- ").has_minhash());
    }

    #[test]
    fn the_vector_kernels_agree_with_the_portable_one() {
        let shingles: Vec<u64> = (0..1000u64).map(|n| fmix64(n + 1)).collect();
        let portable = min_images_portable(&shingles);
        assert_eq!(min_images(&shingles), portable);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor supports AVX2.
                assert_eq!(unsafe { min_images_avx2(&shingles) }, portable);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the processor supports AVX-512F.
                assert_eq!(unsafe { min_images_avx512(&shingles) }, portable);
            }
        }
    }

    #[test]
    fn chunks_of_k_lines() {
        let fingerprint = Fingerprint::of_text("a\nb\nc\nd\ne");
        assert_eq!(fingerprint.chunks(1, usize::MAX).len(), 5);
        assert_eq!(fingerprint.chunks(2, usize::MAX).len(), 3);
        assert_eq!(fingerprint.chunks(4, usize::MAX).len(), 2);
        let mut sorted = fingerprint.lines.clone();
        sorted.sort_unstable();
        assert_eq!(fingerprint.chunks(1, usize::MAX), sorted);
        // Repeated lines are one chunk.
        assert_eq!(
            Fingerprint::of_text("x\nx\nx").chunks(1, usize::MAX).len(),
            1
        );
    }

    #[test]
    fn a_long_text_keeps_a_sample_of_its_chunks_that_its_copies_share() {
        let text = |changed_every: usize, tag: &str| -> String {
            (0..20_000)
                .map(|line| {
                    if changed_every > 0 && line % changed_every == 0 {
                        format!("line {line} of the {tag} version\n")
                    } else {
                        format!("line {line} of the manual\n")
                    }
                })
                .collect()
        };
        let shared = |first: &[u64], second: &[u64]| {
            first
                .iter()
                .filter(|chunk| second.binary_search(chunk).is_ok())
                .count()
        };
        let original = Fingerprint::of_text(&text(0, ""));
        let sample = original.chunks(1, 1000);
        assert_eq!(sample.len(), 1000);
        assert_eq!(sample[..], original.chunks(1, usize::MAX)[..1000]);
        // A copy keeps the very same sample.
        assert_eq!(Fingerprint::of_text(&text(0, "")).chunks(1, 1000), sample);
        // A copy with a tenth of its lines changed shares about 90% of the
        // sample, as it shares 90% of its lines.
        let edited = Fingerprint::of_text(&text(10, "edited")).chunks(1, 1000);
        let share = shared(&sample, &edited) as f64 / 1000.0;
        assert!((0.8..=0.97).contains(&share), "{share}");
        // Another text shares nothing.
        let other = Fingerprint::of_text(&text(1, "other")).chunks(1, 1000);
        assert_eq!(shared(&sample, &other), 0);
    }
}

#[cfg(test)]
mod statistics {
    //! fetterly-2004 §2's arithmetic, observed: for pairs of shingle sets
    //! with resemblance p, one min-hash agrees with probability p, one
    //! supershingle with p^14, and at least two of six (a shared megashingle)
    //! with 1 - (1-q)^6 - 6q(1-q)^5 where q = p^14: about 0.88 at p = 0.95
    //! ("almost 90%") and 0.026 at p = 0.8 ("2.6%").
    use super::*;

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let (state, value) = splitmix64(self.0);
            self.0 = state;
            value
        }
    }

    /// Observed rates over `trials` pairs whose shingle sets share `shared`
    /// pre-images and have `own` of their own each.
    fn observe(shared: usize, own: usize, trials: usize, seed: u64) -> (f64, f64, f64) {
        let mut rng = Rng(seed);
        let (mut functions, mut supers, mut megas) = (0usize, 0usize, 0usize);
        for _ in 0..trials {
            let common: Vec<u64> = (0..shared).map(|_| rng.next()).collect();
            let mut first = common.clone();
            let mut second = common;
            first.extend((0..own).map(|_| rng.next()));
            second.extend((0..own).map(|_| rng.next()));
            let a = min_images(&first);
            let b = min_images(&second);
            functions += a.iter().zip(&b).filter(|(x, y)| x == y).count();
            let agreeing = supershingles_of(&a)
                .iter()
                .zip(&supershingles_of(&b))
                .filter(|(x, y)| x == y)
                .count();
            supers += agreeing;
            let shared_mega = megashingles_of(&supershingles_of(&a))
                .iter()
                .zip(&megashingles_of(&supershingles_of(&b)))
                .any(|(x, y)| x == y);
            assert_eq!(shared_mega, agreeing >= 2);
            megas += usize::from(shared_mega);
        }
        (
            functions as f64 / (trials * MINHASH_FUNCTIONS) as f64,
            supers as f64 / (trials * SUPERSHINGLES) as f64,
            megas as f64 / trials as f64,
        )
    }

    fn at_least_two_of_six(q: f64) -> f64 {
        1.0 - (1.0 - q).powi(6) - 6.0 * q * (1.0 - q).powi(5)
    }

    #[test]
    fn resemblance_095_shares_a_megashingle_nine_times_in_ten() {
        // 190 shared, 5 + 5 own: resemblance 190 / 200 = 0.95.
        let (function, supershingle, megashingle) = observe(190, 5, 3000, 1);
        let q = 0.95f64.powi(14);
        assert!(
            (function - 0.95).abs() < 0.01,
            "function agreement {function}"
        );
        assert!(
            (supershingle - q).abs() < 0.025,
            "supershingle {supershingle} vs {q}"
        );
        let expected = at_least_two_of_six(q);
        assert!((expected - 0.878).abs() < 0.001);
        assert!(
            (megashingle - expected).abs() < 0.035,
            "megashingle {megashingle} vs {expected}"
        );
    }

    #[test]
    fn resemblance_080_rarely_shares_a_megashingle() {
        // 160 shared, 20 + 20 own: resemblance 160 / 200 = 0.8.
        let (function, supershingle, megashingle) = observe(160, 20, 3000, 2);
        let q = 0.8f64.powi(14);
        assert!(
            (function - 0.8).abs() < 0.015,
            "function agreement {function}"
        );
        assert!(
            (supershingle - q).abs() < 0.015,
            "supershingle {supershingle} vs {q}"
        );
        let expected = at_least_two_of_six(q);
        assert!((expected - 0.026).abs() < 0.002);
        assert!(
            (megashingle - expected).abs() < 0.015,
            "megashingle {megashingle} vs {expected}"
        );
    }

    #[test]
    fn disjoint_sets_agree_on_almost_nothing() {
        let (function, supershingle, _) = observe(0, 100, 500, 3);
        assert!(function < 0.005, "function agreement {function}");
        assert_eq!(supershingle, 0.0);
    }
}
