//! Signatures and content keys: how a body is named in the store.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::StoreError;

/// Number of bytes in a [`Signature`].
pub const SIGNATURE_BYTES: usize = 16;

/// The fingerprint of a body (gomes-et-al-2006 §4.1): 128 bits, shown as 32
/// lower-case hex digits, most significant byte first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Signature(pub u128);

impl Signature {
    /// The signature's bytes, most significant first: the order sig2location
    /// reads them in.
    pub fn to_be_bytes(self) -> [u8; SIGNATURE_BYTES] {
        self.0.to_be_bytes()
    }
}

/// The signature the store gives a body: xxh3, 128 bits.
pub fn signature_of(body: &[u8]) -> Signature {
    Signature(xxhash_rust::xxh3::xxh3_128(body))
}

impl fmt::LowerHex for Signature {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{:032x}", self.0)
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{:032x}", self.0)
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Signature({:032x})", self.0)
    }
}

impl FromStr for Signature {
    type Err = StoreError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        parse_signature(input).map_err(|reason| StoreError::InvalidSignature {
            input: input.to_owned(),
            reason,
        })
    }
}

impl TryFrom<String> for Signature {
    type Error = StoreError;

    fn try_from(input: String) -> Result<Self, Self::Error> {
        input.parse()
    }
}

impl From<Signature> for String {
    fn from(signature: Signature) -> String {
        signature.to_string()
    }
}

fn parse_signature(input: &str) -> Result<Signature, &'static str> {
    if input.len() != 2 * SIGNATURE_BYTES {
        return Err("a signature is exactly 32 hex digits");
    }
    if !input.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err("a signature holds only hex digits");
    }
    u128::from_str_radix(input, 16)
        .map(Signature)
        .map_err(|_| "a signature holds only hex digits")
}

/// Names one block of the store (gomes-et-al-2006 §4.1 "contentkey"): the
/// signature of its body, the volume holding it, and which block at the
/// signature's location it is.
///
/// `overflow` 0 is the primary block at the signature's location; `k > 0` is
/// the k-th overflow block, created for a body whose signature collides with a
/// different body (or for every further put in `force-new` mode).
///
/// Written as `<32 hex>-<volume>` for the primary block and
/// `<32 hex>-<volume>-<k>` for an overflow block, in text and in serde.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ContentKey {
    pub signature: Signature,
    pub volume: u16,
    pub overflow: u32,
}

impl fmt::Display for ContentKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}-{}", self.signature, self.volume)?;
        if self.overflow != 0 {
            write!(formatter, "-{}", self.overflow)?;
        }
        Ok(())
    }
}

impl fmt::Debug for ContentKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "ContentKey({self})")
    }
}

impl FromStr for ContentKey {
    type Err = StoreError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        parse_content_key(input).map_err(|reason| StoreError::InvalidContentKey {
            input: input.to_owned(),
            reason,
        })
    }
}

impl TryFrom<String> for ContentKey {
    type Error = StoreError;

    fn try_from(input: String) -> Result<Self, Self::Error> {
        input.parse()
    }
}

impl From<ContentKey> for String {
    fn from(key: ContentKey) -> String {
        key.to_string()
    }
}

fn parse_content_key(input: &str) -> Result<ContentKey, &'static str> {
    let mut parts = input.split('-');
    let (Some(signature_text), Some(volume_text)) = (parts.next(), parts.next()) else {
        return Err("expected <signature>-<volume> or <signature>-<volume>-<overflow>");
    };
    let overflow_text = parts.next();
    if parts.next().is_some() {
        return Err("expected <signature>-<volume> or <signature>-<volume>-<overflow>");
    }
    let signature = parse_signature(signature_text)?;
    let volume = parse_canonical_decimal(volume_text)
        .and_then(|value| u16::try_from(value).ok())
        .ok_or("the volume is not a decimal number from 0 to 65535")?;
    let overflow = match overflow_text {
        None => 0,
        Some(text) => {
            let overflow = parse_canonical_decimal(text)
                .and_then(|value| u32::try_from(value).ok())
                .ok_or("the overflow index is not a decimal number from 1 to 4294967295")?;
            if overflow == 0 {
                return Err("the primary block is written without an overflow index, not with -0");
            }
            overflow
        }
    };
    Ok(ContentKey {
        signature,
        volume,
        overflow,
    })
}

/// Parses a decimal number written the one way the store writes it: digits
/// only, no sign, no leading zero (except `0` itself).
pub(super) fn parse_canonical_decimal(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    if text.len() > 1 && text.starts_with('0') {
        return None;
    }
    text.parse().ok()
}
