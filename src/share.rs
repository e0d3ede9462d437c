//! Shares of whole counts, as the rules' thresholds read them: "more than
//! half of its copies" is `more_than(copies_held, copies, 0.5)`. The
//! thresholds themselves are settings of the stage that uses them
//! (`similarity`, `collections`), each with its reason.

/// Whether `count` is more than `share` of `total` (`share` 0.5: more than
/// half). Exact for the shares the defaults use (halves, a third): `share *
/// total` is rounded, so a share such as 0.7 may count a whole 70% as more.
pub fn more_than(count: usize, total: usize, share: f64) -> bool {
    count as f64 > share * total as f64
}

/// Whether `count` is at least `share` of `total`.
pub fn at_least(count: usize, total: usize, share: f64) -> bool {
    count as f64 >= share * total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_read_as_the_rules_say() {
        assert!(more_than(3, 5, 0.5));
        assert!(!more_than(2, 4, 0.5));
        assert!(at_least(2, 4, 0.5));
        assert!(!at_least(1, 4, 0.5));
        // A third, as the lineage's version rule reads it.
        assert!(at_least(2, 6, 1.0 / 3.0));
        assert!(at_least(3, 9, 1.0 / 3.0));
        assert!(!at_least(1, 4, 1.0 / 3.0));
        assert!(more_than(1, 0, 0.5));
        assert!(!more_than(0, 0, 0.5));
    }
}
