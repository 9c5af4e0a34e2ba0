//! [`KeyedRecords`]: the idempotency [`Records`] with their key → slot index inside the core, so an
//! in-process store keeps no key string, no hash-map entry and no per-slot key array on the JS heap
//! (the package's `MemoryRecords` keeps only each record's result, by slot).
//!
//! Why: with the index in a JS `Map`, a retained record cost the key string, the `Map` entry and
//! two array cells of JS heap besides the record itself, and every full GC marked a million of
//! them. Here a key costs 16 bytes of key id plus 4–8 bytes of table in wasm linear memory.
//!
//! A key is identified by its 128-bit SipHash-2-4 under a per-store random seed (the same standard
//! as the request fingerprint, a 128-bit digest): two different keys share an id with probability
//! about 2^-128 per pair, and since the seed is secret and random per store, nobody can craft two
//! keys that collide. The seed is passed in (the core has no randomness): the wasm layer draws it
//! from the platform CSPRNG.
//!
//! The index is one open-addressing table (linear probing, at most 3/4 full, backward-shift
//! deletion: no tombstones) of 32-bit cells, each `slot + 1` in its low bits and a tag (bits of the
//! key id) above them, with each slot's key id kept beside the records in fixed-size chunks. A
//! probe compares a key id only where the tag matches, so a new key's lookup in a large store
//! reads the table and not the id of every slot it passes (each one a cache miss). Every slot the records free (a definitive failure, a reconciled failure, an
//! expired done record) leaves the index in the same call that freed it.

use super::error::Error;
use super::idempotency::{
    Begin, Chunks, Completion, Fingerprint, Peek, Records, Resolution, StoreConfig,
};

/// A key's identity: SipHash-2-4-128 of its bytes under the store's seed.
pub type KeyId = [u64; 2];

/// SipHash-2-4 with a 128-bit output (the reference algorithm's `outlen = 16` variant) of `data`
/// under the key `(k0, k1)`; the two halves are the output's first and second 8 bytes, read
/// little-endian.
pub fn siphash128(k0: u64, k1: u64, data: &[u8]) -> KeyId {
    sip(k0, k1, data, true)
}

/// SipHash-2-4 of `data`: `wide` the 128-bit variant, else the 64-bit one (its first half).
fn sip(k0: u64, k1: u64, data: &[u8], wide: bool) -> KeyId {
    let (init, fin) = if wide { (0xee, 0xee) } else { (0, 0xff) };
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d ^ init,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }
    let mut blocks = data.chunks_exact(8);
    for block in &mut blocks {
        let mut b = [0u8; 8];
        b.copy_from_slice(block);
        let m = u64::from_le_bytes(b);
        v[3] ^= m;
        round(&mut v);
        round(&mut v);
        v[0] ^= m;
    }
    let mut last = [0u8; 8];
    let tail = blocks.remainder();
    for (d, s) in last.iter_mut().zip(tail) {
        *d = *s;
    }
    let m = u64::from_le_bytes(last) | (data.len() as u64) << 56;
    v[3] ^= m;
    round(&mut v);
    round(&mut v);
    v[0] ^= m;
    v[2] ^= fin;
    for _ in 0..4 {
        round(&mut v);
    }
    let a = v[0] ^ v[1] ^ v[2] ^ v[3];
    v[1] ^= 0xdd;
    for _ in 0..4 {
        round(&mut v);
    }
    [a, v[0] ^ v[1] ^ v[2] ^ v[3]]
}

/// The key → slot table.
#[derive(Debug, Clone)]
struct KeyIndex {
    seed: [u64; 2],
    /// A cell is 0 (empty) or `tag | (slot + 1)`: the low `slot_bits` bits hold `slot + 1`, the
    /// rest a tag taken from the key id's second half. The length is 0 or a power of two.
    table: Vec<u32>,
    /// How many low bits of a cell hold `slot + 1`: enough for twice the store's `max_records`
    /// (widened if a slot ever needs more). The bits above are the tag.
    slot_bits: u32,
    /// How many cells are used.
    used: usize,
    /// Each indexed slot's key id.
    ids: Chunks<KeyId>,
}

/// The `slot_bits` for a store of at most `max_records` records: `2 * max_records` fits.
fn slot_bits_for(max_records: u32) -> u32 {
    (64 - (2 * u64::from(max_records.max(1))).leading_zeros()).min(32)
}

impl KeyIndex {
    fn new(seed: [u64; 2], max_records: u32) -> Self {
        Self {
            seed,
            table: Vec::new(),
            slot_bits: slot_bits_for(max_records),
            used: 0,
            ids: Chunks::default(),
        }
    }

    fn id(&self, key: &[u8]) -> KeyId {
        siphash128(self.seed[0], self.seed[1], key)
    }

    fn home(&self, id: &KeyId) -> usize {
        (id[0] as usize) & (self.table.len().wrapping_sub(1))
    }

    fn id_at(&self, slot: u32) -> Option<&KeyId> {
        self.ids.get(slot as usize)
    }

    /// The bits of a cell that hold `slot + 1`.
    fn slot_mask(&self) -> u32 {
        u32::MAX.checked_shr(32 - self.slot_bits).unwrap_or(0)
    }

    /// `id`'s tag: the bits of a cell above the slot bits (none when the slot takes all 32).
    fn tag(&self, id: &KeyId) -> u32 {
        (id[1] as u32) & !self.slot_mask()
    }

    /// The slot a used cell holds.
    fn slot_in(&self, cell: u32) -> u32 {
        (cell & self.slot_mask()).wrapping_sub(1)
    }

    /// Probe from `home`: the first used cell for which `hit` holds, with its index.
    fn probe(&self, home: usize, hit: impl Fn(u32) -> bool) -> Option<(usize, u32)> {
        let mask = self.table.len().checked_sub(1)?;
        let mut i = home;
        loop {
            let cell = *self.table.get(i)?;
            if cell == 0 {
                return None;
            }
            if hit(cell) {
                return Some((i, cell));
            }
            i = (i + 1) & mask;
        }
    }

    /// The slot indexed under `id`, if any. Why the tag: a fresh key's probe passes the cells of
    /// other keys, and comparing each one's id would read a random place in `ids` (a cache miss in
    /// a large store); the tag in the cell rules almost all of them out without leaving the table.
    fn find(&self, id: &KeyId) -> Option<u32> {
        let tag = self.tag(id);
        let mask = self.slot_mask();
        self.probe(self.home(id), |cell| {
            cell & !mask == tag && self.id_at(self.slot_in(cell)) == Some(id)
        })
        .map(|(_, cell)| self.slot_in(cell))
    }

    /// The cell holding `slot`, if indexed.
    fn cell_of(&self, slot: u32) -> Option<usize> {
        let home = self.home(self.id_at(slot)?);
        let mask = self.slot_mask();
        self.probe(home, |cell| cell & mask == slot.wrapping_add(1))
            .map(|(i, _)| i)
    }

    /// Index `slot` under `id` (not indexed yet).
    fn insert(&mut self, id: KeyId, slot: u32) {
        if let Some(cell) = self.ids.at_mut(slot as usize) {
            *cell = id;
        }
        if slot >= self.slot_mask() {
            // Unreachable while slots stay below 2 * max_records; if one ever does not, give the
            // slot every bit (no tag) rather than store a wrong one.
            let old = self.slot_mask();
            self.slot_bits = 32;
            self.rebuild(self.table.len(), old);
        }
        if (self.used + 1) * 4 > self.table.len() * 3 {
            self.rebuild((self.table.len() * 2).max(16), self.slot_mask());
        }
        self.place(slot);
        self.used += 1;
    }

    /// Put `slot` (whose id is set) in the first empty cell from its home.
    fn place(&mut self, slot: u32) {
        let Some(id) = self.id_at(slot).copied() else {
            return;
        };
        let value = self.tag(&id) | slot.wrapping_add(1);
        let mask = self.table.len() - 1;
        let mut i = self.home(&id);
        while let Some(cell) = self.table.get_mut(i) {
            if *cell == 0 {
                *cell = value;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Re-place every indexed slot into a table of `size` cells (growth, or new slot bits);
    /// `old_mask` is the slot mask the current cells were written with.
    fn rebuild(&mut self, size: usize, old_mask: u32) {
        let old = std::mem::replace(&mut self.table, vec![0; size]);
        for cell in old.into_iter().filter(|&c| c != 0) {
            self.place((cell & old_mask).wrapping_sub(1));
        }
    }

    /// Drop `slot` from the table (backward-shift deletion keeps every probe chain unbroken).
    fn remove(&mut self, slot: u32) {
        let Some(mut hole) = self.cell_of(slot) else {
            return;
        };
        let mask = self.table.len() - 1;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let cell = self.table.get(j).copied().unwrap_or(0);
            if cell == 0 {
                break;
            }
            let home = self.id_at(self.slot_in(cell)).map_or(j, |id| self.home(id));
            // The entry at j may move back into the hole unless its home lies cyclically in
            // (hole, j]: moving it before its home would hide it from its own probe.
            let stays = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !stays {
                if let Some(h) = self.table.get_mut(hole) {
                    *h = cell;
                }
                hole = j;
            }
        }
        if let Some(h) = self.table.get_mut(hole) {
            *h = 0;
        }
        self.used -= 1;
    }
}

/// [`Records`] plus the key → slot index: the in-process store's whole state but the results.
/// Every rule is [`Records`]'s; this type only maps keys to the slots it hands out and forgets a
/// key the moment its slot is freed. The caller still drains [`KeyedRecords::take_expired`] after
/// a `begin` that reports expired slots, before storing anything under the returned slot.
#[derive(Debug, Clone)]
pub struct KeyedRecords {
    records: Records,
    index: KeyIndex,
    /// The key of [`KeyedRecords::fingerprint_of`]: derived from the seed (a PRF output), so key
    /// ids and fingerprints are hashed under independent keys.
    fp_key: [u64; 2],
}

impl KeyedRecords {
    /// An empty store with `config`'s limits; `seed` keys the hash of the keys (draw it from a
    /// CSPRNG: a known seed lets someone craft colliding keys).
    pub fn new(config: StoreConfig, seed: [u64; 2]) -> Self {
        Self {
            fp_key: siphash128(seed[0], seed[1], b"steadfast request fingerprint key"),
            records: Records::new(config),
            index: KeyIndex::new(seed, config.max_records),
        }
    }

    /// The fingerprint of a request's canonical text for THIS store: SipHash-2-4-128 under a key
    /// derived from the store's secret seed. Why not SHA-256/128 (what a shared store keeps, since
    /// every process must compute the same digest there): a fingerprint here never leaves the
    /// process, and a keyed PRF whose key nobody outside knows is as hard to collide on purpose
    /// (nobody can even compute it), while costing a fraction of SHA-256's ~0.5 µs per 64-byte
    /// block in wasm — a 200-byte charge paid ~2 µs for its digest.
    pub fn fingerprint_of(&self, text: &[u8]) -> Fingerprint {
        let [hi, lo] = siphash128(self.fp_key[0], self.fp_key[1], text);
        u128::from(hi) << 64 | u128::from(lo)
    }

    /// The records, by slot (peek, unknown slots, size, limits).
    pub fn records(&self) -> &Records {
        &self.records
    }

    /// The slot of `key`'s record, if it has one (live or expired but not yet swept).
    pub fn slot_of(&self, key: &[u8]) -> Option<u32> {
        self.index.find(&self.index.id(key))
    }

    /// [`Records::runs_request`] for `key` and the request whose canonical text is `text` (empty:
    /// none), hashed as [`KeyedRecords::begin`]'s caller hashed it: `false` when `key` has no record.
    pub fn runs_request(&self, key: &[u8], text: &[u8]) -> bool {
        let fingerprint = (!text.is_empty()).then(|| self.fingerprint_of(text));
        self.slot_of(key)
            .is_some_and(|slot| self.records.runs_request(slot, fingerprint))
    }

    /// Drop the index entries of the slots freed by expiry from `from` on in the pending list.
    fn unindex_expired(&mut self, from: usize) {
        let mut i = from;
        while let Some(&slot) = self.records.expired().get(i) {
            self.index.remove(slot);
            i += 1;
        }
    }

    /// [`Records::begin`] for `key`: a known key passes its slot, a new key that runs is indexed
    /// under the slot it gets. Also returns the slot `key` had before the call (`None`: new).
    pub fn begin(
        &mut self,
        key: &[u8],
        fingerprint: Option<Fingerprint>,
        now_ms: f64,
    ) -> (Begin, Option<u32>) {
        let id = self.index.id(key);
        let known = self.index.find(&id);
        let pending = self.records.expired().len();
        let got = self.records.begin(known, fingerprint, now_ms);
        // Expiry first: the same begin may hand a just-freed slot to this key.
        self.unindex_expired(pending);
        if let (Begin::Run { slot }, None) = (got, known) {
            self.index.insert(id, slot);
        }
        (got, known)
    }

    /// [`Records::complete`]; a freed slot leaves the index.
    pub fn complete(&mut self, slot: u32, completion: Completion, now_ms: f64) -> bool {
        let freed = self.records.complete(slot, completion, now_ms);
        if freed {
            self.index.remove(slot);
        }
        freed
    }

    /// [`Records::resolve`] of `key`'s record ([`Error::UnknownKey`] when it has none).
    pub fn resolve(
        &mut self,
        key: &[u8],
        resolution: Resolution,
        expect_started_at_ms: Option<f64>,
        now_ms: f64,
    ) -> Result<u32, Error> {
        let slot = self.slot_of(key).ok_or(Error::UnknownKey)?;
        self.records
            .resolve(slot, resolution, expect_started_at_ms, now_ms)?;
        if resolution == Resolution::Failed {
            self.index.remove(slot);
        }
        Ok(slot)
    }

    /// [`Records::reopen`] of `key`'s record ([`Error::UnknownKey`] when it has none).
    pub fn reopen(
        &mut self,
        key: &[u8],
        fingerprint: Option<Fingerprint>,
        expect_started_at_ms: Option<f64>,
        now_ms: f64,
    ) -> Result<u32, Error> {
        let slot = self.slot_of(key).ok_or(Error::UnknownKey)?;
        self.records
            .reopen(slot, fingerprint, expect_started_at_ms, now_ms)?;
        Ok(slot)
    }

    /// The live record of `key`, if any.
    pub fn peek(&self, key: &[u8], now_ms: f64) -> Option<Peek> {
        self.records.peek(self.slot_of(key)?, now_ms)
    }

    /// [`Records::sweep`]; expired slots leave the index.
    pub fn sweep(&mut self, now_ms: f64) {
        let pending = self.records.expired().len();
        self.records.sweep(now_ms);
        self.unindex_expired(pending);
    }

    /// [`Records::has_expired`].
    pub fn has_expired(&self) -> bool {
        self.records.has_expired()
    }

    /// [`Records::take_expired`] (already out of the index).
    pub fn take_expired(&mut self) -> Vec<u32> {
        self.records.take_expired()
    }

    /// Keys indexed (equal to the records held).
    pub fn indexed(&self) -> usize {
        self.index.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::idempotency::Status;

    fn store(max: u32) -> KeyedRecords {
        KeyedRecords::new(
            StoreConfig {
                ttl_ms: 1000.0,
                max_records: max,
            },
            [1, 2],
        )
    }

    #[test]
    fn siphash128_matches_the_reference_vectors() {
        // The reference implementation's vectors_sip128: key 00..0f, messages 00, 00 01, ...
        let (k0, k1) = (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);
        let bytes = |id: KeyId| {
            let mut b = id[0].to_le_bytes().to_vec();
            b.extend_from_slice(&id[1].to_le_bytes());
            b
        };
        assert_eq!(
            bytes(siphash128(k0, k1, &[])),
            [
                0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55,
                0x02, 0x93
            ]
        );
    }

    #[test]
    #[allow(deprecated)] // std's SipHasher: SipHash-2-4, 64-bit, the same rounds and padding
    fn the_rounds_and_the_padding_match_std_siphash_at_every_length() {
        use std::hash::{Hasher, SipHasher};
        let (k0, k1) = (0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
        let data: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
        for n in 0..data.len() {
            let mut h = SipHasher::new_with_keys(k0, k1);
            h.write(&data[..n]);
            assert_eq!(sip(k0, k1, &data[..n], false)[0], h.finish(), "{n} bytes");
        }
    }

    #[test]
    fn fingerprints_are_per_store_keyed_and_independent_of_key_ids() {
        let a = KeyedRecords::new(StoreConfig::default(), [1, 2]);
        let b = KeyedRecords::new(StoreConfig::default(), [1, 3]);
        let text = br#"{"amountCents":1200,"currency":"usd"}"#;
        assert_eq!(
            a.fingerprint_of(text),
            a.fingerprint_of(text),
            "stable in a store"
        );
        assert_ne!(
            a.fingerprint_of(text),
            b.fingerprint_of(text),
            "another seed, another digest"
        );
        assert_ne!(
            a.fingerprint_of(text),
            a.fingerprint_of(br#"{"amountCents":1201,"currency":"usd"}"#)
        );
        // Not the key id of the same bytes: the two hashes run under different keys.
        let [hi, lo] = a.index.id(text);
        assert_ne!(
            a.fingerprint_of(text),
            u128::from(hi) << 64 | u128::from(lo)
        );
        // Any one byte changed anywhere changes it (a 200-byte text, every position).
        let long: Vec<u8> = (0..200u8).collect();
        let base = a.fingerprint_of(&long);
        for i in 0..long.len() {
            let mut t = long.clone();
            if let Some(c) = t.get_mut(i) {
                *c ^= 0x20;
            }
            assert_ne!(a.fingerprint_of(&t), base, "byte {i}");
        }
    }

    #[test]
    fn a_run_sends_again_only_the_request_its_key_was_bound_to() {
        let mut s = store(10);
        let a = br#"f:{"amountCents":1000,"currency":"usd"}"#;
        let b = br#"f:{"amountCents":100000,"currency":"usd"}"#;
        let fp = Some(s.fingerprint_of(a));
        let Begin::Run { slot } = s.begin(b"k", fp, 0.0).0 else {
            panic!()
        };
        assert!(s.runs_request(b"k", a), "the same request, in flight");
        assert!(!s.runs_request(b"k", b), "another request under the key");
        assert!(
            !s.runs_request(b"k", b""),
            "no fingerprint is another request"
        );
        assert!(!s.runs_request(b"other", a), "a key with no record");
        let Begin::Run { slot: bare } = s.begin(b"bare", None, 0.0).0 else {
            panic!()
        };
        assert!(s.runs_request(b"bare", b"") && !s.runs_request(b"bare", a));
        // Once the run has ended, nothing more is sent under it, whatever its status.
        s.complete(slot, Completion::Transient, 1.0);
        assert!(!s.runs_request(b"k", a), "unknown");
        s.complete(bare, Completion::Success, 1.0);
        assert!(!s.runs_request(b"bare", b""), "done");
    }

    #[test]
    fn keys_map_to_their_own_records_and_leave_with_them() {
        let mut s = store(10);
        let Begin::Run { slot: a } = s.begin(b"a", None, 0.0).0 else {
            panic!()
        };
        let Begin::Run { slot: b } = s.begin(b"b", Some(7), 0.0).0 else {
            panic!()
        };
        assert_ne!(a, b);
        assert_eq!(
            (s.slot_of(b"a"), s.slot_of(b"b"), s.slot_of(b"c")),
            (Some(a), Some(b), None)
        );
        assert!(matches!(s.begin(b"a", None, 1.0), (Begin::InFlight { .. }, Some(x)) if x == a));
        assert_eq!(s.begin(b"b", None, 1.0), (Begin::Mismatch, Some(b)));
        assert!(s.complete(a, Completion::Definitive, 2.0));
        assert_eq!(s.slot_of(b"a"), None);
        s.complete(b, Completion::Transient, 2.0);
        assert_eq!(s.peek(b"b", 3.0).map(|p| p.status), Some(Status::Unknown));
        assert_eq!(
            s.resolve(b"a", Resolution::Done, None, 3.0),
            Err(Error::UnknownKey)
        );
        assert_eq!(s.resolve(b"b", Resolution::Failed, None, 3.0), Ok(b));
        assert_eq!(
            (s.slot_of(b"b"), s.indexed(), s.records().len()),
            (None, 0, 0)
        );
    }

    #[test]
    fn expiry_unindexes_before_the_freed_slot_is_reused() {
        let mut s = store(1);
        let Begin::Run { slot } = s.begin(b"old", None, 0.0).0 else {
            panic!()
        };
        s.complete(slot, Completion::Success, 0.0);
        assert_eq!(s.begin(b"new", None, 500.0), (Begin::Full, None));
        // Past the TTL the full store sweeps "old" and hands its slot to "new" in one begin.
        assert_eq!(s.begin(b"new", None, 1000.0), (Begin::Run { slot }, None));
        assert_eq!(s.take_expired(), vec![slot]);
        assert_eq!((s.slot_of(b"old"), s.slot_of(b"new")), (None, Some(slot)));
        assert_eq!(s.indexed(), 1);
    }

    #[test]
    fn a_large_index_survives_growth_and_deletions() {
        let n = 5000u32;
        let mut s = store(n);
        let key = |i: u32| format!("order-{i}");
        for i in 0..n {
            assert_eq!(
                s.begin(key(i).as_bytes(), None, 0.0),
                (Begin::Run { slot: i }, None)
            );
        }
        // Free every third; the rest must still be found, the freed ones not.
        for i in (0..n).step_by(3) {
            assert!(s.complete(i, Completion::Definitive, 1.0));
        }
        for i in 0..n {
            let want = (i % 3 != 0).then_some(i);
            assert_eq!(s.slot_of(key(i).as_bytes()), want, "{i}");
        }
        assert_eq!(s.indexed(), s.records().len());
    }
    #[test]
    fn cells_keep_twice_max_records_of_slot_and_the_rest_as_tag() {
        assert_eq!(slot_bits_for(1), 2);
        assert_eq!(slot_bits_for(1_000_000), 21);
        assert_eq!(slot_bits_for(10_000_000), 25);
        assert_eq!(
            slot_bits_for(1 << 30),
            32,
            "the largest store: no tag, every cell compares ids"
        );
        let ix = KeyIndex::new([1, 2], 1_000_000);
        assert_eq!(ix.slot_mask(), (1 << 21) - 1);
        let id = [0, 0xffff_ffff_ffff_ffff];
        assert_eq!(ix.tag(&id), !((1 << 21) - 1));
        assert_eq!(ix.slot_in(ix.tag(&id) | 1_999_999), 1_999_998);
        assert_eq!(KeyIndex::new([1, 2], 1 << 30).tag(&id), 0);
    }

    /// Index `ids[i]` under slot `i` in a fresh index, then check find/remove against the list.
    fn index_of(ids: &[KeyId], max_records: u32) -> KeyIndex {
        let mut ix = KeyIndex::new([1, 2], max_records);
        for (slot, id) in ids.iter().enumerate() {
            ix.insert(*id, slot as u32);
        }
        ix
    }

    #[test]
    fn ids_that_share_home_and_tag_are_still_told_apart_by_the_id() {
        // Same first half (same home), same tag bits, different low bits of the second half.
        let ids: Vec<KeyId> = (0..40u64).map(|i| [7, 0xabcd_0000_0000_0000 | i]).collect();
        let mut ix = index_of(&ids, 1000);
        for (slot, id) in ids.iter().enumerate() {
            assert_eq!(ix.find(id), Some(slot as u32));
        }
        assert_eq!(ix.find(&[7, 0xabcd_0000_0000_0000 | 999]), None);
        for slot in (0..40).step_by(2) {
            ix.remove(slot);
        }
        for (slot, id) in ids.iter().enumerate() {
            assert_eq!(
                ix.find(id),
                (slot % 2 == 1).then_some(slot as u32),
                "slot {slot}"
            );
        }
    }

    #[test]
    fn a_slot_beyond_the_slot_bits_widens_the_cells_and_loses_nothing() {
        // max_records 1: two slot bits (slot + 1 <= 3). Slots 0..50 force the widening at slot 3.
        let ids: Vec<KeyId> = (0..50u64)
            .map(|i| siphash128(3, 4, &i.to_le_bytes()))
            .collect();
        let mut ix = index_of(&ids, 1);
        assert_eq!(ix.slot_bits, 32);
        for (slot, id) in ids.iter().enumerate() {
            assert_eq!(ix.find(id), Some(slot as u32));
        }
        ix.remove(10);
        assert_eq!(ix.find(&ids[10]), None);
        assert_eq!(ix.find(&ids[11]), Some(11));
    }

    proptest::proptest! {
        /// Any sequence of begins and frees over a small key space agrees with a map kept beside it,
        /// at slot widths with a wide tag (max 64) and none (max 2^30).
        #[test]
        fn the_index_agrees_with_a_model(ops in proptest::collection::vec((0u8..48, proptest::bool::ANY), 1..400), wide in proptest::bool::ANY) {
            let max = if wide { 1 << 30 } else { 64 };
            let mut s = store(max);
            let mut model = std::collections::HashMap::new();
            for (k, free) in ops {
                let key = [b'k', k];
                match model.get(&k).copied() {
                    Some(slot) if free => {
                        proptest::prop_assert!(s.complete(slot, Completion::Definitive, 1.0));
                        model.remove(&k);
                    }
                    Some(slot) => proptest::prop_assert!(matches!(s.begin(&key, None, 1.0).0, Begin::InFlight { .. }), "slot {slot}"),
                    None => {
                        let (b, known) = s.begin(&key, None, 1.0);
                        let Begin::Run { slot } = b else { return Err(proptest::test_runner::TestCaseError::fail("not run")) };
                        proptest::prop_assert_eq!(known, None);
                        model.insert(k, slot);
                    }
                }
                for q in 0u8..48 {
                    proptest::prop_assert_eq!(s.slot_of(&[b'k', q]), model.get(&q).copied());
                }
            }
            proptest::prop_assert_eq!(s.indexed(), model.len());
        }

        /// A run in flight sends again exactly the texts equal to the one it began with: any change
        /// to the request (one byte, a shorter or longer text) is another request.
        #[test]
        fn only_the_bound_text_runs_again(bound in proptest::collection::vec(proptest::num::u8::ANY, 0..80), other in proptest::collection::vec(proptest::num::u8::ANY, 0..80)) {
            let mut s = store(4);
            let fp = (!bound.is_empty()).then(|| s.fingerprint_of(&bound));
            let began = matches!(s.begin(b"key", fp, 0.0).0, Begin::Run { .. });
            proptest::prop_assert!(began);
            proptest::prop_assert!(s.runs_request(b"key", &bound));
            proptest::prop_assert_eq!(s.runs_request(b"key", &other), other == bound);
        }
    }
}
