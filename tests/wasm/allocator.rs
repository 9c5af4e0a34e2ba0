//! The npm module's global allocator (talc, chosen for size: src/lib.rs) under a churn that a
//! corrupting allocator could not survive: thousands of live blocks of mixed sizes and alignments,
//! grown, shrunk and freed in a seeded random order, each filled with a pattern derived from its
//! identity and checked before every change and at the end. Also multi-megabyte blocks (the heap
//! must grow the wasm memory) and a HashMap that rehashes while other blocks move around it.
use std::collections::HashMap;

use wasm_bindgen_test::wasm_bindgen_test;

/// An over-aligned element, so the allocator serves alignments above its default.
#[derive(Clone, Copy, PartialEq, Debug)]
#[repr(align(64))]
struct Wide(u64);

/// SplitMix64: a seeded, repeatable sequence.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

enum Block {
    Bytes(u32, Vec<u8>),
    Words(u32, Vec<u64>),
    Wide(u32, Vec<Wide>),
}

fn byte(id: u32, i: usize) -> u8 {
    (id as usize).wrapping_mul(31).wrapping_add(i) as u8
}

fn make(id: u32, rng: &mut Rng) -> Block {
    // Mostly small, some medium, a few large (above any small-size bin).
    let len = match rng.below(100) {
        0..=69 => rng.below(64),
        70..=96 => rng.below(4096),
        _ => rng.below(200_000),
    };
    match rng.below(3) {
        0 => Block::Bytes(id, (0..len).map(|i| byte(id, i)).collect()),
        1 => Block::Words(
            id,
            (0..len / 8)
                .map(|i| u64::from(id) << 32 | i as u64)
                .collect(),
        ),
        _ => Block::Wide(
            id,
            (0..len / 64)
                .map(|i| Wide(u64::from(id) ^ i as u64))
                .collect(),
        ),
    }
}

fn check(b: &Block) {
    match b {
        Block::Bytes(id, v) => v
            .iter()
            .enumerate()
            .for_each(|(i, x)| assert_eq!(*x, byte(*id, i), "block {id} byte {i}")),
        Block::Words(id, v) => v.iter().enumerate().for_each(|(i, x)| {
            assert_eq!(*x, u64::from(*id) << 32 | i as u64, "block {id} word {i}")
        }),
        Block::Wide(id, v) => {
            assert_eq!(v.as_ptr() as usize % 64, 0, "block {id}: 64-byte alignment");
            v.iter().enumerate().for_each(|(i, x)| {
                assert_eq!(*x, Wide(u64::from(*id) ^ i as u64), "block {id} wide {i}")
            })
        }
    }
}

/// Grow or shrink in place of the allocator's choice (realloc), keeping the pattern.
fn resize(b: &mut Block, rng: &mut Rng) {
    let grow = rng.below(2) == 0;
    match b {
        Block::Bytes(id, v) => {
            let id = *id;
            resize_vec(v, grow, rng, 5000, 2, |i| byte(id, i));
        }
        Block::Words(id, v) => {
            let id = u64::from(*id);
            resize_vec(v, grow, rng, 700, 3, |i| id << 32 | i as u64);
        }
        Block::Wide(id, v) => {
            let id = u64::from(*id);
            resize_vec(v, grow, rng, 90, 2, |i| Wide(id ^ i as u64));
        }
    }
}

/// Grow `v` by 1 to `most` elements (`at(i)` for index `i`), or cut it to `1 / shrink` of its
/// length and shrink its capacity.
fn resize_vec<T>(
    v: &mut Vec<T>,
    grow: bool,
    rng: &mut Rng,
    most: u64,
    shrink: usize,
    at: impl Fn(usize) -> T,
) {
    if grow {
        let n = v.len() + 1 + rng.below(most);
        v.extend((v.len()..n).map(at));
    } else {
        v.truncate(v.len() / shrink);
        v.shrink_to_fit();
    }
}

#[wasm_bindgen_test]
fn churn_keeps_every_block_intact() {
    let mut rng = Rng(0x5eed);
    let mut live: Vec<Block> = Vec::new();
    let mut next_id = 0u32;
    let mut map: HashMap<u32, String> = HashMap::new();
    for step in 0..40_000u32 {
        match rng.below(10) {
            0..=4 => {
                live.push(make(next_id, &mut rng));
                next_id += 1;
            }
            5..=6 if !live.is_empty() => {
                let i = rng.below(live.len() as u64);
                check(&live[i]);
                resize(&mut live[i], &mut rng);
                check(&live[i]);
            }
            7..=8 if !live.is_empty() => {
                let i = rng.below(live.len() as u64);
                check(&live.swap_remove(i));
            }
            _ => {
                map.insert(step, format!("value-{step}"));
                if step % 3 == 0 {
                    map.remove(&(step / 2));
                }
            }
        }
        if live.len() > 3000 {
            // Free a third at once: large runs of adjacent free chunks to coalesce.
            live.drain(..1000).for_each(|b| check(&b));
        }
    }
    live.iter().for_each(check);
    for (k, v) in &map {
        assert_eq!(v, &format!("value-{k}"));
    }
    assert!(next_id > 10_000, "the churn ran: {next_id} blocks");
}

#[wasm_bindgen_test]
fn multi_megabyte_blocks_grow_the_memory_and_keep_their_bytes() {
    let before = core::arch::wasm32::memory_size(0);
    let big: Vec<Vec<u8>> = (0..6u32)
        .map(|id| (0..3_000_000).map(|i| byte(id, i)).collect())
        .collect();
    assert!(
        core::arch::wasm32::memory_size(0) > before,
        "18 MB of blocks grew the memory"
    );
    // A realloc of a block far larger than any bin, then everything checked.
    let mut grown = big[0].clone();
    grown.extend((grown.len()..9_000_000).map(|i| byte(0, i)));
    for (id, v) in big.iter().enumerate() {
        v.iter()
            .enumerate()
            .for_each(|(i, x)| assert_eq!(*x, byte(id as u32, i)));
    }
    grown
        .iter()
        .enumerate()
        .for_each(|(i, x)| assert_eq!(*x, byte(0, i)));
    drop(big);
    // Freed memory is reused: the same amount again does not grow the memory a second time as much.
    let after_first = core::arch::wasm32::memory_size(0);
    let again: Vec<Vec<u8>> = (0..6u32).map(|id| vec![id as u8; 3_000_000]).collect();
    assert!(again
        .iter()
        .enumerate()
        .all(|(id, v)| v.iter().all(|x| *x == id as u8)));
    assert_eq!(
        core::arch::wasm32::memory_size(0),
        after_first,
        "18 MB freed and asked for again: reused, not grown"
    );
}
