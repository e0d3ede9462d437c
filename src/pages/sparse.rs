//! Lists that almost every page leaves empty, kept at the size of what
//! they hold: the host names a page's text names (a mirror's "mirror of"
//! note) are on a handful of pages of a crawl, and a slice in every page
//! (16 bytes, empty) cost more memory than the lists themselves.

use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{HostId, PageId};

/// A list one pointer wide: no allocation when empty, the list behind one
/// box otherwise. Serialized as the plain sequence it holds, so a field
/// that was a `Vec` or a boxed slice reads and writes the same bytes.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct ThinList<T>(Option<Box<Box<[T]>>>);

impl<T> ThinList<T> {
    pub const fn new() -> ThinList<T> {
        ThinList(None)
    }
}

impl<T> Deref for ThinList<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.0.as_deref().map_or(&[], |items| items)
    }
}

impl<T> From<Vec<T>> for ThinList<T> {
    fn from(items: Vec<T>) -> ThinList<T> {
        if items.is_empty() {
            ThinList(None)
        } else {
            ThinList(Some(Box::new(items.into_boxed_slice())))
        }
    }
}

impl<T> FromIterator<T> for ThinList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> ThinList<T> {
        items.into_iter().collect::<Vec<T>>().into()
    }
}

impl<T: fmt::Debug> fmt::Debug for ThinList<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Serialize> Serialize for ThinList<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ThinList<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ThinList<T>, D::Error> {
        Vec::<T>::deserialize(deserializer).map(ThinList::from)
    }
}

/// Host lists by page, only for the pages that have one: page ids in
/// order, where each one's hosts end in one shared array. A page without
/// a list costs nothing; a page with one, 8 bytes and its hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostLists {
    pages: Vec<PageId>,
    /// Where each listed page's hosts end in `hosts`.
    ends: Vec<u32>,
    hosts: Vec<HostId>,
}

/// The lists of a table without any.
pub static NO_HOST_LISTS: HostLists = HostLists::new();

impl HostLists {
    pub const fn new() -> HostLists {
        HostLists {
            pages: Vec::new(),
            ends: Vec::new(),
            hosts: Vec::new(),
        }
    }

    /// Adds a page's hosts (nothing when there are none). Pages come in
    /// increasing id order.
    ///
    /// # Panics
    /// When `page` is not after the last page added, or the lists hold
    /// more than 2^32 hosts in all: both mistakes of the caller.
    pub fn push(&mut self, page: PageId, hosts: &[HostId]) {
        if hosts.is_empty() {
            return;
        }
        assert!(
            self.pages.last().is_none_or(|&last| last < page),
            "host lists are added in page order"
        );
        self.hosts.extend_from_slice(hosts);
        let end = u32::try_from(self.hosts.len()).expect("fewer than 2^32 listed hosts");
        self.pages.push(page);
        self.ends.push(end);
    }

    /// The hosts listed for a page (empty when it has none).
    pub fn get(&self, page: PageId) -> &[HostId] {
        let Ok(position) = self.pages.binary_search(&page) else {
            return &[];
        };
        let start = position
            .checked_sub(1)
            .map_or(0, |before| self.ends[before] as usize);
        // Lists read from disk are checked (is_well_formed); bad ones
        // give nothing rather than a panic.
        self.hosts
            .get(start..self.ends[position] as usize)
            .unwrap_or(&[])
    }

    /// How many pages have a list.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Whether the lists are as [`HostLists::push`] builds them: pages in
    /// increasing order, each with at least one host, ends within the
    /// hosts. A table read from disk is checked before it is used.
    pub fn is_well_formed(&self) -> bool {
        self.pages.len() == self.ends.len()
            && self.pages.windows(2).all(|pair| pair[0] < pair[1])
            && self
                .ends
                .iter()
                .try_fold(0u32, |start, &end| (end > start).then_some(end))
                .is_some_and(|last| last as usize == self.hosts.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thin_list_is_one_pointer_wide_and_empty_allocates_nothing() {
        assert_eq!(std::mem::size_of::<ThinList<Box<str>>>(), 8);
        let empty: ThinList<u32> = Vec::new().into();
        assert!(empty.0.is_none());
        assert!(empty.is_empty());
        let full: ThinList<u32> = vec![3, 1].into();
        assert_eq!(&*full, &[3, 1]);
    }

    #[test]
    fn a_thin_list_writes_the_bytes_a_boxed_slice_writes() {
        let slice: Box<[Box<str>]> = vec!["a.example".into(), "b.example".into()].into();
        let thin: ThinList<Box<str>> = slice.to_vec().into();
        let written = postcard::to_allocvec(&slice).unwrap();
        assert_eq!(postcard::to_allocvec(&thin).unwrap(), written);
        let read: ThinList<Box<str>> = postcard::from_bytes(&written).unwrap();
        assert_eq!(read, thin);
        let empty: Box<[Box<str>]> = Box::default();
        let read: ThinList<Box<str>> =
            postcard::from_bytes(&postcard::to_allocvec(&empty).unwrap()).unwrap();
        assert!(read.0.is_none());
    }

    #[test]
    fn host_lists_give_each_page_its_hosts_and_others_none() {
        let mut lists = HostLists::new();
        lists.push(PageId(2), &[HostId(5), HostId(7)]);
        lists.push(PageId(3), &[]);
        lists.push(PageId(9), &[HostId(1)]);
        assert_eq!(lists.len(), 2);
        assert_eq!(lists.get(PageId(2)), &[HostId(5), HostId(7)]);
        assert_eq!(lists.get(PageId(9)), &[HostId(1)]);
        for none in [0, 3, 8, 10] {
            assert!(lists.get(PageId(none)).is_empty());
        }
        assert!(lists.is_well_formed());
        assert!(NO_HOST_LISTS.get(PageId(0)).is_empty());
    }

    #[test]
    fn host_lists_read_from_disk_are_checked() {
        let mut lists = HostLists::new();
        lists.push(PageId(1), &[HostId(1)]);
        lists.push(PageId(4), &[HostId(2), HostId(3)]);
        let mut out_of_order = lists.clone();
        out_of_order.pages.swap(0, 1);
        assert!(!out_of_order.is_well_formed());
        let mut past_the_end = lists.clone();
        past_the_end.ends[1] = 9;
        assert!(!past_the_end.is_well_formed());
        let mut empty_list = lists.clone();
        empty_list.ends[1] = 1;
        assert!(!empty_list.is_well_formed());
        assert!(lists.is_well_formed());
    }

    #[test]
    #[should_panic(expected = "page order")]
    fn host_lists_refuse_pages_out_of_order() {
        let mut lists = HostLists::new();
        lists.push(PageId(4), &[HostId(1)]);
        lists.push(PageId(4), &[HostId(2)]);
    }
}
