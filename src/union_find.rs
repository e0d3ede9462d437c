//! Union-find over dense `u32` ids, with union by size and path halving.

pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    pub fn new(count: usize) -> UnionFind {
        UnionFind {
            parent: (0..count as u32).collect(),
            size: vec![1; count],
        }
    }

    pub fn find(&mut self, mut item: u32) -> u32 {
        while self.parent[item as usize] != item {
            let grandparent = self.parent[self.parent[item as usize] as usize];
            self.parent[item as usize] = grandparent;
            item = grandparent;
        }
        item
    }

    /// Joins the sets of `first` and `second`; true when they were apart.
    pub fn union(&mut self, first: u32, second: u32) -> bool {
        let (mut first, mut second) = (self.find(first), self.find(second));
        if first == second {
            return false;
        }
        if self.size[first as usize] < self.size[second as usize] {
            std::mem::swap(&mut first, &mut second);
        }
        self.parent[second as usize] = first;
        self.size[first as usize] += self.size[second as usize];
        true
    }

    /// For every item, the index of its set, numbered in order of each set's
    /// smallest item.
    pub fn labels(&mut self) -> Vec<u32> {
        let count = self.parent.len();
        let mut label_of_root = vec![u32::MAX; count];
        let mut labels = Vec::with_capacity(count);
        let mut next = 0;
        for item in 0..count as u32 {
            let root = self.find(item) as usize;
            if label_of_root[root] == u32::MAX {
                label_of_root[root] = next;
                next += 1;
            }
            labels.push(label_of_root[root]);
        }
        labels
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitive_unions_make_one_set() {
        let mut sets = UnionFind::new(6);
        assert!(sets.union(0, 1));
        assert!(sets.union(1, 2));
        assert!(!sets.union(0, 2));
        sets.union(4, 5);
        assert_eq!(sets.labels(), vec![0, 0, 0, 1, 2, 2]);
    }
}
