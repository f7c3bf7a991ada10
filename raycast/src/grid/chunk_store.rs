//! [`ChunkStore`]: the chunks of a [`ChunkedVoxels`](super::ChunkedVoxels)
//! world, found by key through a hash map or, when the world's chunks are
//! dense enough in their bounding box, a flat directory.
//!
//! A cast looks a chunk up at every chunk it enters. A hash lookup (hash,
//! probe, compare the key) cost about 120 instructions per ray on the peer
//! comparison's 256² height field, a quarter of the chunked world's lead
//! over the dense volume; the directory makes it an index and a load. The
//! directory covers a box around every chunk ever stored, with room to grow
//! (so that a world filled chunk by chunk rebuilds it a logarithmic number
//! of times) and always a chunk to spare on each side (the certified cast
//! moves its index by strides, and steps up to a chunk beyond the stored
//! ones), and is kept only while that box has at most [`DIR_PER_CHUNK`]
//! entries per chunk (plus [`DIR_MIN`]): an unbounded world whose chunks lie
//! far apart falls back to the hash map alone.

use super::chunked::KeyHasher;
use glam::IVec3;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Words (bricks of 4³ cells) per chunk of 16³ cells.
pub(super) const WORDS: usize = 64;

/// One chunk: 16³ bits, one word per brick of 4³. 512 bytes on a cache
/// line's boundary: a slot's words are at `slot · 512` (a shift, where a
/// count of the set bits beside them made it a multiply by 520), and a
/// row of four bricks never straddles two lines.
#[derive(Clone, Debug, PartialEq)]
#[repr(C, align(64))]
pub(super) struct Chunk {
    pub(super) bits: [u64; WORDS],
}

impl Chunk {
    /// A chunk with no cell set.
    pub(super) const EMPTY: Chunk = Chunk { bits: [0; WORDS] };

    /// True when no cell is set.
    pub(super) fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// Bit `w` set for each word `w` that is not zero (each brick that
    /// holds a solid cell).
    fn occupancy(&self) -> u64 {
        self.bits.iter().enumerate().fold(0, |o, (w, &b)| o | u64::from(b != 0) << w)
    }
}

/// Directory entries allowed per stored chunk (12 bytes each, the slot and
/// the bricks' occupancy, next to the chunk's 512): at most 38 % more
/// memory.
const DIR_PER_CHUNK: i64 = 16;

/// Directory entries allowed whatever the number of chunks.
const DIR_MIN: i64 = 1 << 15;

/// The chunks by key (chunk coordinates: cells `>> 4`).
#[derive(Clone, Debug)]
pub(super) struct ChunkStore {
    /// Every chunk, by slot; free slots (after a removal) are listed in
    /// `free`. Slot 0 is no key's: an empty chunk that a directory entry of
    /// 0 (no chunk) points at, so that [`DirWords::chunk_at`] reads an absent
    /// chunk's words as zeros without a branch.
    slots: Vec<Chunk>,
    free: Vec<u32>,
    /// The slot of each stored key (`IVec3` keys: hashed field by field,
    /// where an array is hashed as bytes, one at a time by [`KeyHasher`]).
    keys: HashMap<IVec3, u32, BuildHasherDefault<KeyHasher>>,
    /// Bounds (inclusive) of every key ever stored.
    lo: [i32; 3],
    hi: [i32; 3],
    /// The slot (0: no chunk) of the keys `dir_lo + r` for `r < dir_ext`,
    /// x fastest; empty when the directory is not kept.
    dir: Vec<u32>,
    /// Beside each directory entry, its chunk's [`Chunk::occupancy`] (0
    /// for no chunk): the certified cast's bricks' walk reads it, one load
    /// where the chunk's word took the entry, the slot and the word.
    occ: Vec<u64>,
    dir_lo: [i32; 3],
    dir_ext: [u32; 3],
}

impl PartialEq for ChunkStore {
    /// The same keys with the same chunks (slots, free list and directory
    /// are bookkeeping).
    fn eq(&self, other: &Self) -> bool {
        self.keys.len() == other.keys.len()
            && self.keys.iter().all(|(k, &s)| other.get(k.to_array()) == Some(&self.slots[s as usize]))
    }
}

impl ChunkStore {
    /// An empty store.
    pub(super) fn new() -> Self {
        Self {
            slots: vec![Chunk::EMPTY],
            free: Vec::new(),
            keys: HashMap::default(),
            lo: [i32::MAX; 3],
            hi: [i32::MIN; 3],
            dir: Vec::new(),
            occ: Vec::new(),
            dir_lo: [0; 3],
            dir_ext: [0; 3],
        }
    }

    /// Number of stored chunks.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Bounds (inclusive) of every key ever stored; `lo > hi` before the first.
    pub(super) fn bounds(&self) -> ([i32; 3], [i32; 3]) {
        (self.lo, self.hi)
    }

    /// The directory entry of `key`, if the directory is kept and covers it.
    #[inline(always)]
    fn dir_index(&self, key: [i32; 3]) -> Option<usize> {
        // Wrapping offsets: keys below `dir_lo` become huge and fail the bound.
        let r: [u32; 3] = std::array::from_fn(|a| key[a].wrapping_sub(self.dir_lo[a]) as u32);
        let e = self.dir_ext;
        (r[0] < e[0] && r[1] < e[1] && r[2] < e[2])
            .then(|| r[0] as usize + e[0] as usize * (r[1] as usize + e[1] as usize * r[2] as usize))
    }

    /// The chunk of `key`, if stored.
    #[inline(always)]
    pub(super) fn get(&self, key: [i32; 3]) -> Option<&Chunk> {
        if self.dir.is_empty() {
            return self.keys.get(&IVec3::from_array(key)).map(|&s| &self.slots[s as usize]);
        }
        // Every stored key lies in the directory's box.
        let s = self.dir[self.dir_index(key)?];
        (s != 0).then(|| &self.slots[s as usize])
    }

    /// The chunk of `key`, stored empty first if absent (tests: writing
    /// its words directly leaves the occupancy behind).
    #[cfg(test)]
    fn get_or_insert(&mut self, key: [i32; 3]) -> &mut Chunk {
        let s = match self.keys.get(&IVec3::from_array(key)) {
            Some(&s) => s,
            None => self.insert(key),
        };
        &mut self.slots[s as usize]
    }

    /// Sets (`solid`) or clears the bits `m` of word `w` of the chunk of
    /// `key`, storing the chunk first if absent (when setting) and
    /// forgetting it when it becomes empty; keeps the occupancy beside the
    /// directory. True when a bit changed (`m` is a single bit).
    pub(super) fn set_bits(&mut self, key: [i32; 3], w: usize, m: u64, solid: bool) -> bool {
        let s = match self.keys.get(&IVec3::from_array(key)) {
            Some(&s) => s,
            None if solid => self.insert(key),
            None => return false,
        };
        let word = &mut self.slots[s as usize].bits[w];
        if (*word & m != 0) == solid {
            return false;
        }
        *word ^= m;
        let occupied = *word != 0;
        if !occupied && self.slots[s as usize].is_empty() {
            self.remove(key);
        } else if let Some(i) = self.dir_index(key).filter(|_| !self.dir.is_empty()) {
            self.occ[i] = self.occ[i] & !(1 << w) | u64::from(occupied) << w;
        }
        true
    }

    /// Forgets the chunk of `key` (its slot is reused by the next insert).
    pub(super) fn remove(&mut self, key: [i32; 3]) {
        if let Some(s) = self.keys.remove(&IVec3::from_array(key)) {
            self.free.push(s);
            if let Some(i) = self.dir_index(key).filter(|_| !self.dir.is_empty()) {
                self.dir[i] = 0;
                self.occ[i] = 0;
            }
        }
    }

    /// Stores an empty chunk for the absent `key`; its slot.
    fn insert(&mut self, key: [i32; 3]) -> u32 {
        let empty = Chunk::EMPTY;
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = empty;
                s
            }
            None => {
                self.slots.push(empty);
                // A key per chunk and every key within ±2^25 (cells within
                // ±2^29): far fewer than 2^32 slots fit in memory. Never 0
                // (the empty chunk's).
                (self.slots.len() - 1) as u32
            }
        };
        self.keys.insert(IVec3::from_array(key), s);
        self.lo = std::array::from_fn(|a| self.lo[a].min(key[a]));
        self.hi = std::array::from_fn(|a| self.hi[a].max(key[a]));
        // A key on the directory's edge takes a new one, so that every
        // stored key has a key to spare on each side (`DirWords`).
        let spare = [-1, 1].map(|d| self.dir_index(key.map(|k| k + d)).is_some());
        match self.dir_index(key).filter(|_| !self.dir.is_empty() && spare == [true; 2]) {
            Some(i) => (self.dir[i], self.occ[i]) = (s, 0),
            None => self.rebuild_dir(),
        }
        s
    }

    /// Makes a directory over the stored keys' bounds with half their
    /// extent to spare on each side, and at least one key (the certified
    /// cast's walk, within a brick of the cells, moves its index by a
    /// stride at each chunk crossed and never leaves that box), or drops it
    /// when that box is larger than the store warrants.
    fn rebuild_dir(&mut self) {
        let ext: [i64; 3] = std::array::from_fn(|a| i64::from(self.hi[a]) - i64::from(self.lo[a]) + 1);
        let pad = ext.map(|e| (e / 2).max(1));
        let lo: [i64; 3] = std::array::from_fn(|a| i64::from(self.lo[a]) - pad[a]);
        let ext: [i64; 3] = std::array::from_fn(|a| ext[a] + 2 * pad[a]);
        // Up to 2^81 for keys within ±2^25: in `i128`.
        let volume = i128::from(ext[0]) * i128::from(ext[1]) * i128::from(ext[2]);
        self.dir.clear();
        self.occ.clear();
        self.dir_ext = [0; 3];
        if volume > i128::from(DIR_PER_CHUNK * self.keys.len() as i64 + DIR_MIN) {
            self.dir.shrink_to_fit();
            self.occ.shrink_to_fit();
            return;
        }
        // Keys are within ±2^25, so `lo` and `lo + ext` fit an `i32`.
        self.dir_lo = lo.map(|v| v as i32);
        self.dir_ext = ext.map(|v| v as u32);
        self.dir.resize(volume as usize, 0);
        self.occ.resize(volume as usize, 0);
        for (key, &s) in &self.keys {
            if let Some(i) = self.dir_index(key.to_array()) {
                self.dir[i] = s;
                self.occ[i] = self.slots[s as usize].occupancy();
            }
        }
    }

    /// The moves of a directory index by a key along x, y and z (0s when
    /// the directory is not kept).
    pub(super) fn dir_strides(&self) -> [usize; 3] {
        let e = self.dir_ext.map(|e| e as usize);
        if self.dir.is_empty() {
            [0; 3]
        } else {
            [1, e[0], e[0] * e[1]]
        }
    }

    /// The directory's reader for the certified cast, with chunk keys
    /// counted from `key0`; `None` when the directory is not kept.
    pub(super) fn dir_words(&self, key0: [i32; 3]) -> Option<DirWords<'_>> {
        (!self.dir.is_empty()).then(|| DirWords {
            dir: &self.dir,
            occ: &self.occ,
            slots: &self.slots,
            // Wrapping: keys below `dir_lo` become huge and fail the bound.
            off: std::array::from_fn(|a| key0[a].wrapping_sub(self.dir_lo[a]) as u32),
            ext: self.dir_ext,
        })
    }
}

/// The words of the chunks through the directory (`ChunkStore::dir_words`):
/// a chunk's index from its key counted from a fixed key, found once per
/// certified cast and then moved by the directory's strides
/// (`ChunkStore::dir_strides`), and the words at an index: two loads and
/// no branch but the bounds (never failed: the directory's box holds every
/// stored key with one key to spare on each side, and a certified walk
/// stays within one brick of the cells).
#[derive(Clone, Copy)]
pub(super) struct DirWords<'a> {
    dir: &'a [u32],
    occ: &'a [u64],
    slots: &'a [Chunk],
    off: [u32; 3],
    ext: [u32; 3],
}

impl<'a> DirWords<'a> {
    /// The directory's index of the chunk `key0 + k`, if in its box.
    #[inline(always)]
    pub(super) fn index(&self, k: [u32; 3]) -> Option<usize> {
        let r: [u32; 3] = std::array::from_fn(|a| k[a].wrapping_add(self.off[a]));
        let e = self.ext;
        (r[0] < e[0] && r[1] < e[1] && r[2] < e[2])
            .then(|| r[0] as usize + e[0] as usize * (r[1] as usize + e[1] as usize * r[2] as usize))
    }

    /// The words of the chunk at directory index `i` (the empty chunk's
    /// where none is stored, or `i` is beyond the directory: never on a
    /// certified walk).
    #[inline(always)]
    pub(super) fn chunk_at(&self, i: usize) -> &'a [u64; WORDS] {
        let s = self.dir.get(i).copied().unwrap_or(0) as usize;
        self.slots.get(s).map_or(&self.slots[0].bits, |c| &c.bits)
    }

    /// The occupancy of the chunk at directory index `i` (bit `w`: its
    /// word `w` is not zero; 0 where no chunk is stored, or `i` is beyond
    /// the directory).
    #[inline(always)]
    pub(super) fn occupancy_at(&self, i: usize) -> u64 {
        self.occ.get(i).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random inserts and removals, dense and far apart: every key answers
    /// as a plain map of the same keys does, and the directory is kept
    /// exactly when the keys fill enough of their box.
    #[test]
    fn lookups_match_a_plain_map() {
        let mut next = crate::grid::test_ints(0x9e37_79b9_7f4a_7c15u64);
        for spread in [4i32, 40, 1 << 20] {
            let mut store = ChunkStore::new();
            let mut plain: HashMap<[i32; 3], u64> = HashMap::new();
            for step in 0..3000u64 {
                let key = [0, 1, 2].map(|_| next(2 * spread as u64) as i32 - spread);
                if next(3) == 0 {
                    store.remove(key);
                    plain.remove(&key);
                } else {
                    store.get_or_insert(key).bits[0] = step;
                    plain.insert(key, step);
                }
                let probe = [0, 1, 2].map(|_| next(2 * spread as u64 + 2) as i32 - spread - 1);
                for k in [key, probe] {
                    assert_eq!(store.get(k).map(|c| c.bits[0]), plain.get(&k).copied(), "{k:?}");
                }
            }
            assert_eq!(store.len(), plain.len());
            for (k, v) in &plain {
                assert_eq!(store.get(*k).map(|c| c.bits[0]), Some(*v));
            }
            // 8³ keys, most of them stored: a directory; ~1,300 keys spread
            // over 80³ or 2^21³: the map alone.
            assert_eq!(!store.dir.is_empty(), spread == 4, "spread {spread}");
        }
    }

    /// A block of keys grown outwards one key at a time, faster towards
    /// +x and −z: the directory always holds every key ever stored with a
    /// key to spare on each side (the certified cast moves its index by
    /// strides and relies on it), and its strides are those of its box.
    #[test]
    fn directory_keeps_a_key_to_spare() {
        let mut store = ChunkStore::new();
        for r in 0..7 {
            let keys =
                (-r..=2 * r).flat_map(|x| (-r..=r).flat_map(move |y| (-2 * r..=r).map(move |z| [x, y, z])));
            for key in keys {
                store.get_or_insert(key);
                if store.dir.is_empty() {
                    continue;
                }
                let (lo, hi) = store.bounds();
                for k in [[lo[0] - 1, lo[1] - 1, lo[2] - 1], [hi[0] + 1, hi[1] + 1, hi[2] + 1]] {
                    assert!(store.dir_index(k).is_some(), "{k:?} beyond the directory at {key:?}");
                }
                let e = store.dir_ext.map(|e| e as usize);
                assert_eq!(store.dir_strides(), [1, e[0], e[0] * e[1]]);
            }
        }
        assert!(!store.dir.is_empty());
    }

    /// Cells set and cleared at random, in a few chunks (the directory
    /// kept and rebuilt as they grow): the occupancy beside every directory
    /// entry is its chunk's, chunks that become empty are forgotten, and
    /// `set_bits` says whether a bit changed as a plain set of cells does.
    #[test]
    fn occupancy_follows_the_words() {
        let mut next = crate::grid::test_ints(0x51ed_270b_2a3c_9e17u64);
        let mut store = ChunkStore::new();
        let mut plain = std::collections::HashSet::new();
        for step in 0..20_000u64 {
            let key = [0, 1, 2].map(|_| next(6) as i32 - 3);
            let (w, b) = (next(64) as usize, next(4) as u32);
            let solid = next(5) < 3;
            let changed = if solid { plain.insert((key, w, b)) } else { plain.remove(&(key, w, b)) };
            assert_eq!(store.set_bits(key, w, 1 << b, solid), changed, "step {step}");
            if step % 97 == 0 || step > 19_900 {
                for (k, &s) in &store.keys {
                    assert!(!store.slots[s as usize].is_empty(), "empty chunk {k:?} kept");
                }
                if !store.dir.is_empty() {
                    for (i, &s) in store.dir.iter().enumerate() {
                        assert_eq!(store.occ[i], store.slots[s as usize].occupancy(), "entry {i}");
                    }
                }
            }
        }
        assert!(!store.dir.is_empty());
        let cells: usize =
            store.slots.iter().map(|c| c.bits.iter().map(|w| w.count_ones() as usize).sum::<usize>()).sum();
        assert_eq!(cells, plain.len());
    }

    #[test]
    fn equality_ignores_slots() {
        let (mut a, mut b) = (ChunkStore::new(), ChunkStore::new());
        a.get_or_insert([1, 2, 3]).bits[5] = 5;
        a.get_or_insert([7, 0, 0]).bits[0] = 1;
        b.get_or_insert([7, 0, 0]).bits[0] = 1;
        b.get_or_insert([1, 2, 3]).bits[5] = 5;
        assert_eq!(a, b);
        b.remove([7, 0, 0]);
        assert_ne!(a, b);
    }
}
