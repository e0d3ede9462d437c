//! Deterministic record ids and choices; the WARC digest label is the
//! library's ([`mirrorscope::corpus::digest`]).

use xxhash_rust::xxh3::xxh3_128_with_seed;

pub use mirrorscope::corpus::digest::warc_sha1;

/// Fixed seed of every hash-based choice the builder makes.
pub const SEED: u64 = 0x6d69_7272_6f72_7363; // "mirrorsc"

/// A deterministic WARC-Record-ID: a version-8 (custom) UUID from a hash of
/// the crawl's salt (empty for the first crawl), the record's sequence
/// number, type and target.
pub fn record_id(salt: &str, sequence: u64, kind: &str, target: &str) -> String {
    let key = if salt.is_empty() {
        format!("{sequence}\u{0}{kind}\u{0}{target}")
    } else {
        format!("{salt}\u{0}{sequence}\u{0}{kind}\u{0}{target}")
    };
    let mut value = xxh3_128_with_seed(key.as_bytes(), SEED);
    // version 8 in bits 76..80, variant 0b10 in bits 62..64 (RFC 9562)
    value = (value & !(0xF_u128 << 76)) | (0x8_u128 << 76);
    value = (value & !(0x3_u128 << 62)) | (0x2_u128 << 62);
    let hex = format!("{value:032x}");
    format!(
        "<urn:uuid:{}-{}-{}-{}-{}>",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A deterministic number in `0..modulus` for `key` (the builder's only
/// source of "randomness").
pub fn choose(key: &str, salt: &str, modulus: u64) -> u64 {
    let value = xxh3_128_with_seed(format!("{salt}\u{0}{key}").as_bytes(), SEED) as u64;
    value % modulus.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_ids_are_uuid_shaped() {
        let id = record_id("", 7, "response", "http://a.example/");
        assert_eq!(id.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&id[24..25], "8");
        assert_eq!(id, record_id("", 7, "response", "http://a.example/"));
        assert_ne!(id, record_id("second", 7, "response", "http://a.example/"));
    }
}
