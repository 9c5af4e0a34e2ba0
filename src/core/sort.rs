//! An in-place heapsort for the wasm module's one sort (the idempotency store's `unknownSlots`).
//!
//! Why not `sort_unstable_by`: core's pattern-defeating quicksort inlines into several KB of wasm;
//! swapping it for this in `Records::unknown_slots` measured 25198 → 24099 B gz (−1.1 KB; benches/
//! README.md, size section), for a list that is sorted rarely (reconciliation after an outage). Heapsort is O(n log n) in the worst case too, needs no
//! allocation, and is a few hundred bytes. It is not stable: give it a total order (ties broken
//! by a unique key) and its result is exactly every other sort's.

/// Sort `v` ascending by `less` (a strict "a before b"), in place.
pub fn heap_sort_by<T, F: FnMut(&T, &T) -> bool>(v: &mut [T], mut less: F) {
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift_down(v, root, n, &mut less);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end, &mut less);
    }
}

/// Restore the max-heap property below `root` within `v[..end]`. Not inlined into its two call
/// sites: 18 B gz smaller, and the sort is not on a hot path.
#[inline(never)]
fn sift_down<T, F: FnMut(&T, &T) -> bool>(v: &mut [T], mut root: usize, end: usize, less: &mut F) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end {
            if let (Some(a), Some(b)) = (v.get(child), v.get(child + 1)) {
                if less(a, b) {
                    child += 1;
                }
            }
        }
        match (v.get(root), v.get(child)) {
            (Some(r), Some(c)) if less(r, c) => v.swap(root, child),
            _ => return,
        }
        root = child;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_like_the_standard_sort(mut v in proptest::collection::vec(any::<i16>(), 0..300)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            heap_sort_by(&mut v, |a, b| a < b);
            prop_assert_eq!(v, expected);
        }

        #[test]
        fn a_total_order_on_pairs_gives_the_same_order_as_sort_unstable_by(
            pairs in proptest::collection::vec((any::<u32>(), prop_oneof![any::<f64>(), Just(0.0), Just(-0.0), Just(f64::NAN)]), 0..200)
        ) {
            // The store's order: time (total_cmp), then slot.
            let cmp = |a: &(u32, f64), b: &(u32, f64)| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0));
            let mut expected = pairs.clone();
            expected.sort_unstable_by(cmp);
            let mut got = pairs;
            heap_sort_by(&mut got, |a, b| cmp(a, b).is_lt());
            let bits = |v: &[(u32, f64)]| v.iter().map(|(s, t)| (*s, t.to_bits())).collect::<Vec<_>>();
            prop_assert_eq!(bits(&got), bits(&expected));
        }
    }
}
