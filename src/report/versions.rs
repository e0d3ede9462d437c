//! Which copies of a manual hold the same version of it: the copies whose
//! own texts (site chrome such as a mirror's banner set aside, see
//! [`crate::similarity::Similarity::own_text_signatures`]) are the same at
//! nine in ten of the places both hold. A copy a few changes behind the
//! original stays one; another release, which rewrites more, does not.
//! Used by `avoid` (within a version, a page with the same own text is a
//! copy whatever the mirror changed around it) and `evolve` (a copy that
//! changed version).

use std::collections::HashMap;

use crate::collections::Collection;
use crate::pages::{url_path, PageTable};

/// A copy's own texts by place (the path below the copy's folder); pages
/// without own text are left out.
pub(super) fn texts_by_place<'t>(
    table: &'t PageTable,
    collection: &Collection,
    own_text: &[u64],
) -> HashMap<&'t str, u64> {
    let folder = url_path(&collection.prefix).unwrap_or("/");
    collection
        .pages
        .iter()
        .filter_map(|&page| {
            let url = &table.pages[page.0 as usize].url;
            let place = url_path(url)?.strip_prefix(folder)?;
            let text = own_text[page.0 as usize];
            (text != 0).then_some((place, text))
        })
        .collect()
}

/// Whether two copies hold the same version: the same own text at nine in
/// ten of the places both hold (and they share one at least).
pub(super) fn same_version(first: &HashMap<&str, u64>, second: &HashMap<&str, u64>) -> bool {
    let (small, large) = if first.len() <= second.len() {
        (first, second)
    } else {
        (second, first)
    };
    let mut common = 0usize;
    let mut same = 0usize;
    for (place, text) in small {
        if let Some(other) = large.get(place) {
            common += 1;
            same += usize::from(other == text);
        }
    }
    common > 0 && same * 10 >= common * 9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_places_in_ten_make_one_version() {
        let copy = |changed: usize| -> HashMap<&'static str, u64> {
            const PLACES: [&str; 10] = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
            PLACES
                .iter()
                .enumerate()
                .map(|(index, place)| {
                    (
                        *place,
                        if index < changed {
                            100 + index as u64
                        } else {
                            index as u64
                        },
                    )
                })
                .collect()
        };
        assert!(same_version(&copy(0), &copy(1)));
        assert!(!same_version(&copy(0), &copy(2)));
        assert!(!same_version(&copy(0), &HashMap::new()));
    }
}
