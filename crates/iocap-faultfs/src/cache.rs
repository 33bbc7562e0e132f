//! The state of [`crate::Fault::Cache`] rules: one least-recently-used map of 4 KiB blocks per
//! rule, so a test can put a cache of a known size below a file and check that `iocap
//! cachescan` finds it. A read whose every block is in the map is a hit; any other read misses
//! (and is delayed by the rule). Every block a read touches becomes the most recent, and the
//! oldest are dropped past the window's size, as an LRU cache does. Writes fill the map too
//! when the rule looks at writes, as a write-back cache keeps what was written.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// Granularity of the simulated cache.
pub(crate) const CACHE_BLOCK: u64 = 4096;

/// One rule's cache: block -> last use, and last use -> block, for eviction in use order.
#[derive(Debug, Default)]
pub(crate) struct Lru {
    capacity_blocks: u64,
    clock: u64,
    last_use: HashMap<(u64, u64), u64>,
    by_age: BTreeMap<u64, (u64, u64)>,
}

fn name_key(name: &str) -> u64 {
    let mut h = DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
}

impl Lru {
    pub(crate) fn new(window_bytes: u64) -> Lru {
        Lru {
            capacity_blocks: window_bytes / CACHE_BLOCK,
            ..Lru::default()
        }
    }

    /// Whether every block of `[offset, offset + len)` of `name` is held; then all of them
    /// become the most recent (inserted where missing, the oldest evicted).
    pub(crate) fn access(&mut self, name: &str, offset: u64, len: u64) -> bool {
        let file = name_key(name);
        let first = offset / CACHE_BLOCK;
        let last = (offset + len.max(1) - 1) / CACHE_BLOCK;
        let hit = (first..=last).all(|b| self.last_use.contains_key(&(file, b)));
        for b in first..=last {
            self.touch((file, b));
        }
        hit
    }

    fn touch(&mut self, key: (u64, u64)) {
        if self.capacity_blocks == 0 {
            return;
        }
        self.clock += 1;
        if let Some(old) = self.last_use.insert(key, self.clock) {
            self.by_age.remove(&old);
        }
        self.by_age.insert(self.clock, key);
        while self.last_use.len() as u64 > self.capacity_blocks {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.last_use.remove(&oldest);
        }
    }

    /// Blocks held now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.last_use.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_window_and_drops_the_least_recent() {
        let mut c = Lru::new(4 * CACHE_BLOCK);
        assert!(!c.access("f", 0, 4 * CACHE_BLOCK), "cold");
        assert!(c.access("f", 0, 4 * CACHE_BLOCK), "warm");
        assert!(!c.access("g", 0, 10), "another file is another block");
        // "g" pushed out f's block 0, the least recent
        assert_eq!(c.len(), 4);
        assert!(!c.access("f", 0, 10));
        assert!(c.access("f", 3 * CACHE_BLOCK, CACHE_BLOCK));
        // a read larger than the window never hits
        let mut small = Lru::new(2 * CACHE_BLOCK);
        assert!(!small.access("f", 0, 3 * CACHE_BLOCK));
        assert!(!small.access("f", 0, 3 * CACHE_BLOCK));
        assert_eq!(small.len(), 2);
        assert!(
            !Lru::new(0).access("f", 0, 10),
            "a zero window holds nothing"
        );
    }
}
