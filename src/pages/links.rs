//! A capture's outlinks, held as one string.
//!
//! A capture keeps its outlinks from ingest until the page table resolves
//! them to page ids; on the generated million-page web they were half of
//! what the captures held. As a `Vec<String>`, each link cost its 24-byte
//! header and an allocation of its own; as one string, a link costs its
//! bytes and a newline.

use std::fmt;

use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Outlinks in document order, each ended by a newline. Serialized as the
/// sequence of strings it holds, so a field that was a `Vec<String>`
/// reads and writes the same bytes.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Links(Box<str>);

/// What ends each link in the string. A canonical URL has none (a URL
/// parser drops a raw newline, and an escaped one is `%0A`); one given
/// with a newline has it written `%0A`.
const END: char = '\n';

impl Links {
    pub fn new() -> Links {
        Links::default()
    }

    /// The links, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.split_terminator(END)
    }

    pub fn len(&self) -> usize {
        self.0.bytes().filter(|&byte| byte == END as u8).count()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds a link after the ones held (the whole string is made again:
    /// for a few links, as tests add them).
    pub fn push(&mut self, link: &str) {
        self.extend([link]);
    }

    /// Adds links after the ones held.
    pub fn extend<S: AsRef<str>>(&mut self, links: impl IntoIterator<Item = S>) {
        let mut all = String::from(std::mem::take(&mut self.0));
        for link in links {
            push(&mut all, link.as_ref());
        }
        self.0 = all.into_boxed_str();
    }
}

fn push(all: &mut String, link: &str) {
    if link.contains(END) {
        all.push_str(&link.replace(END, "%0A"));
    } else {
        all.push_str(link);
    }
    all.push(END);
}

impl<S: AsRef<str>> FromIterator<S> for Links {
    fn from_iter<I: IntoIterator<Item = S>>(links: I) -> Links {
        let mut all = Links::default();
        all.extend(links);
        all
    }
}

impl fmt::Debug for Links {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Links {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut sequence = serializer.serialize_seq(Some(self.len()))?;
        for link in self.iter() {
            sequence.serialize_element(link)?;
        }
        sequence.end()
    }
}

impl<'de> Deserialize<'de> for Links {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Links, D::Error> {
        deserializer.deserialize_seq(LinksVisitor)
    }
}

struct LinksVisitor;

impl<'de> Visitor<'de> for LinksVisitor {
    type Value = Links;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a sequence of links")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut links: A) -> Result<Links, A::Error> {
        let mut all = String::new();
        while links.next_element_seed(Appended(&mut all))?.is_some() {}
        Ok(Links(all.into_boxed_str()))
    }
}

/// Reads one link onto the end of the links read so far, without a string
/// of its own.
struct Appended<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Appended<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Appended<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a link")
    }

    fn visit_str<E: serde::de::Error>(self, link: &str) -> Result<(), E> {
        push(self.0, link);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_read_and_write_the_bytes_of_a_list_of_strings() {
        let list = vec![
            "http://a.example/".to_string(),
            String::new(),
            "https://b.example/x?y#z".to_string(),
            // Escaped in JSON.
            "http://c.example/\"quoted\"\\".to_string(),
        ];
        let links: Links = list.iter().collect();
        assert_eq!(links.len(), 4);
        assert_eq!(links.iter().collect::<Vec<_>>(), list);
        let bytes = postcard::to_allocvec(&list).unwrap();
        assert_eq!(postcard::to_allocvec(&links).unwrap(), bytes);
        assert_eq!(postcard::from_bytes::<Links>(&bytes).unwrap(), links);
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(serde_json::to_string(&links).unwrap(), json);
        assert_eq!(serde_json::from_str::<Links>(&json).unwrap(), links);
        // None at all.
        let none = Links::new();
        assert!(none.is_empty());
        assert_eq!(none.len(), 0);
        assert_eq!(
            postcard::to_allocvec(&none).unwrap(),
            postcard::to_allocvec(&Vec::<String>::new()).unwrap()
        );
    }

    #[test]
    fn a_link_keeps_its_place_whatever_it_holds() {
        let mut links: Links = ["http://a.example/one\ntwo"].into_iter().collect();
        links.extend(["http://a.example/three"]);
        assert_eq!(
            links.iter().collect::<Vec<_>>(),
            ["http://a.example/one%0Atwo", "http://a.example/three"]
        );
    }
}
