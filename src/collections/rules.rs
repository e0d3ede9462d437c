//! The thresholds of the collection rules, each with its default and the
//! reason for it. The rules themselves are in [`super::grow`],
//! [`super::manuals`], [`super::graph`] and [`super::continuity`]; a share
//! here is compared as [`crate::share::more_than`] (or
//! [`crate::share::at_least`], where the rule says so) that share of a
//! whole count.

use serde::{Deserialize, Serialize};

/// Thresholds of growth, joining by folders, completion and numbering.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CollectionRules {
    /// Strict growth (extended off): when only some copies of a cluster link
    /// back to their collection's root, the side that is more than this
    /// share of the copies is kept (cho-2000 Definition 5 asks all or none;
    /// the smaller side is a break point, §2.2). Half: the larger side.
    pub links_back_share: f64,
    /// Reach is measured from at most this many source clusters of a
    /// component of the trivial cluster graph when choosing where growth
    /// starts; the others start in preference order. Bounds the work on
    /// components with very many sources (thousands of one-page clusters
    /// linking into a manual) at no cost to the crawls measured, where
    /// components have a handful.
    pub measured_sources: usize,
    /// A link is followed through at most this many redirects to the page
    /// it leads to (a moved folder, then `http` to `https`, then a trailing
    /// slash makes three; a loop ends here).
    pub redirect_hops: usize,
    /// A cluster more than this share of whose pages are stand-ins (a soft
    /// 404 answering many URLs) takes no part in joining by folders: one
    /// text at many URLs is no part of a manual.
    pub stand_in_share: f64,
    /// A part joins a manual when more than this share of its copies each
    /// lie inside the folder of one of the manual's copies on the same host.
    /// A majority: a partial mirror missing a few copies still joins, and
    /// one copy that happens to lie inside a folder (a shared licence page
    /// at the same place on one host) moves nothing.
    pub held_copies_share: f64,
    /// A part takes a manual in when more than this share of the manual's
    /// copies lie inside the part's copies (the manual's front page above
    /// sections that grew apart). A majority, as above.
    pub holding_copies_share: f64,
    /// A copy of a part lying outside the manual's folders is placed by URL
    /// suffix (fetterly-2004 §2) when more than this share of its pages end
    /// with the path their copies have inside the manual elsewhere: most of
    /// the pages, so that an index page or two with a common name cannot
    /// place it.
    pub suffix_pages_share: f64,
    /// Completion adds the unplaced pages of a copy's tree only when they
    /// number at most this multiple of the pages the copy holds: they are
    /// the exceptions (pages of one version, pages nothing links to). Two
    /// sibling manuals that share a licence and an install page are not
    /// each other's copies, and the pages of one are many more than the
    /// other's shared ones.
    pub completion_ratio: f64,
    /// A cluster of the next generation keeps the number of an earlier one
    /// when it holds at least this share of the earlier cluster's pages: a
    /// fragment of a cluster that is otherwise gone gets a new number.
    pub continues_share: f64,
}

impl Default for CollectionRules {
    fn default() -> Self {
        CollectionRules {
            links_back_share: 0.5,
            measured_sources: 64,
            redirect_hops: 5,
            stand_in_share: 0.5,
            held_copies_share: 0.5,
            holding_copies_share: 0.5,
            suffix_pages_share: 0.5,
            completion_ratio: 1.0,
            continues_share: 0.5,
        }
    }
}

impl CollectionRules {
    /// Why these values cannot be used, if they cannot.
    pub fn problem(&self) -> Option<String> {
        let shares = [
            ("links_back_share", self.links_back_share),
            ("stand_in_share", self.stand_in_share),
            ("held_copies_share", self.held_copies_share),
            ("holding_copies_share", self.holding_copies_share),
            ("suffix_pages_share", self.suffix_pages_share),
            ("continues_share", self.continues_share),
        ];
        if let Some((name, _)) = shares.iter().find(|(_, share)| !(0.0..1.0).contains(share)) {
            return Some(format!(
                "collections.rules.{name} must be at least 0 and below 1"
            ));
        }
        if !(self.completion_ratio >= 0.0 && self.completion_ratio.is_finite()) {
            return Some("collections.rules.completion_ratio must be 0 or more".into());
        }
        if self.measured_sources == 0 {
            return Some("collections.rules.measured_sources must be at least 1".into());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_usable_and_nonsense_is_refused() {
        assert_eq!(CollectionRules::default().problem(), None);
        for bad in [
            CollectionRules {
                held_copies_share: 1.0,
                ..CollectionRules::default()
            },
            CollectionRules {
                stand_in_share: -0.1,
                ..CollectionRules::default()
            },
            CollectionRules {
                completion_ratio: f64::NAN,
                ..CollectionRules::default()
            },
            CollectionRules {
                measured_sources: 0,
                ..CollectionRules::default()
            },
        ] {
            assert!(bad.problem().is_some(), "{bad:?}");
        }
    }
}
