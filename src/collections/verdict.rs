//! What each pass did to a cluster, kept with it: which rule formed it,
//! what joined it, and why joining by folders left it as grown. `eval`'s
//! break explanations, `similar` and `clusters` read it rather than
//! recomputing the rules.

use serde::{Deserialize, Serialize};

/// How a similar cluster was first found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Formed {
    /// Grown from trivial clusters along links (cho-2000 Figure 9).
    #[default]
    Grown,
    /// Grown elsewhere (the Spark job) and imported.
    Imported,
    /// A trivial cluster of copies that took part in no grown cluster: one
    /// page and its copies.
    OnePage,
}

/// Why joining by folders ([`super::manuals`]) joined a cluster to no
/// manual and nothing to it, when a rule had a reason to consider it (a
/// cluster whose copies no manual's folders hold is a manual of its own,
/// kept apart by nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Apart {
    /// Joining by folders is off (`collections.folders`).
    FoldersOff,
    /// All its copies are on one host: names of one page or copies within
    /// a host, which no rule joins.
    OneHost,
    /// Most of its pages are stand-ins (`collections.rules.stand_in_share`).
    StandIns,
    /// A page of it has no URL path to place it by.
    NoPath,
    /// No manual holds enough of its copies in its folders
    /// (`collections.rules.held_copies_share`): the best held `held` of its
    /// `copies` (one or more).
    NotHeld { held: u32, copies: u32 },
    /// A manual held it, but a copy of the `loose` ones lying outside the
    /// manual's folders could not be placed by URL suffix
    /// (`collections.rules.suffix_pages_share`).
    NotPlaced { loose: u32 },
}

/// What the passes did to one cluster.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterVerdict {
    pub formed: Formed,
    /// Trivial clusters of copies it holds.
    pub trivial_clusters: u32,
    /// Grown clusters joined into it by folders (parts of the manual that
    /// grew apart, its front page).
    pub parts_joined: u32,
    /// Why it stayed as grown, when no part joined it and it joined none.
    pub apart: Option<Apart>,
    /// Second names of its pages that joined (a folder and its
    /// `index.html`).
    pub second_names: u32,
    /// Pages of its copies' trees that joined by completion.
    pub pages_completed: u32,
}

impl Apart {
    /// The reason in a sentence.
    pub fn sentence(&self) -> String {
        match *self {
            Apart::FoldersOff => "joining by folders is off (collections.folders)".into(),
            Apart::OneHost => {
                "its copies are all on one host: names of one page or copies within a host, which no rule joins".into()
            }
            Apart::StandIns => {
                "most of its pages are stand-ins (one text answering many URLs of a host): a cluster mostly of them joins nothing".into()
            }
            Apart::NoPath => "a page of it has no URL path to place it by".into(),
            Apart::NotHeld { held, copies } => format!(
                "no larger cluster has copies whose folders hold enough of its copies (at most {held} of its {copies}; collections.rules.held_copies_share)"
            ),
            Apart::NotPlaced { loose } => format!(
                "a manual holds enough of its copies, but one of the {loose} lying outside that manual's folders could not be placed by the paths of its pages (collections.rules.suffix_pages_share)"
            ),
        }
    }
}

impl ClusterVerdict {
    /// What formed the cluster and what joined it, in a sentence.
    pub fn sentence(&self) -> String {
        let mut parts = vec![match self.formed {
            Formed::Grown => format!(
                "grown along links from {} trivial cluster{} of copies",
                self.trivial_clusters,
                plural(self.trivial_clusters)
            ),
            Formed::Imported => format!(
                "grown by the Spark job from {} trivial cluster{} of copies",
                self.trivial_clusters,
                plural(self.trivial_clusters)
            ),
            Formed::OnePage => {
                "one page and its copies, which growth joined to no larger cluster".into()
            }
        }];
        if self.parts_joined > 0 {
            parts.push(format!(
                "joined by folders with {} other grown cluster{}",
                self.parts_joined,
                plural(self.parts_joined)
            ));
        }
        if let Some(apart) = &self.apart {
            parts.push(format!("kept as grown: {}", apart.sentence()));
        }
        if self.second_names > 0 {
            parts.push(format!(
                "{} second name{} of its pages added",
                self.second_names,
                plural(self.second_names)
            ));
        }
        if self.pages_completed > 0 {
            parts.push(format!(
                "{} page{} of its copies' folders added by completion",
                self.pages_completed,
                plural(self.pages_completed)
            ));
        }
        parts.join("; ")
    }
}

fn plural(count: u32) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_reads_as_a_sentence() {
        let verdict = ClusterVerdict {
            trivial_clusters: 12,
            parts_joined: 3,
            pages_completed: 1,
            ..ClusterVerdict::default()
        };
        assert_eq!(
            verdict.sentence(),
            "grown along links from 12 trivial clusters of copies; joined by folders with 3 other grown clusters; 1 page of its copies' folders added by completion"
        );
        let apart = ClusterVerdict {
            formed: Formed::OnePage,
            trivial_clusters: 1,
            apart: Some(Apart::NotHeld { held: 1, copies: 3 }),
            ..ClusterVerdict::default()
        };
        assert!(
            apart.sentence().contains("(at most 1 of its 3;"),
            "{}",
            apart.sentence()
        );
        // Shown as JSON, kept in the generation with postcard: read back
        // the same from both.
        let text = serde_json::to_string(&apart).unwrap();
        assert!(text.contains("\"not-held\":{\"held\":1"), "{text}");
        assert_eq!(
            serde_json::from_str::<ClusterVerdict>(&text).unwrap(),
            apart
        );
        let bytes = postcard::to_allocvec(&apart).unwrap();
        assert_eq!(
            postcard::from_bytes::<ClusterVerdict>(&bytes).unwrap(),
            apart
        );
    }
}
