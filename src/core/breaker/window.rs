//! The rolling window of a rate breaker: one bit per outcome in a ring, with a running failure
//! count, so judging the rate is O(1) and a window of N outcomes costs N/8 bytes.

/// A ring of outcome bits with a running failure count.
#[derive(Debug, Clone)]
pub(super) struct Window {
    bits: Vec<u64>,
    size: u32,
    head: u32,
    pub(super) len: u32,
    pub(super) failures: u32,
}

impl Window {
    pub(super) fn new(size: u32) -> Self {
        Self {
            bits: vec![0; size.div_ceil(64) as usize],
            size,
            head: 0,
            len: 0,
            failures: 0,
        }
    }

    fn get(&self, i: u32) -> bool {
        self.bits
            .get((i / 64) as usize)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    fn set(&mut self, i: u32, failed: bool) {
        if let Some(w) = self.bits.get_mut((i / 64) as usize) {
            let mask = 1u64 << (i % 64);
            if failed {
                *w |= mask;
            } else {
                *w &= !mask;
            }
        }
    }

    pub(super) fn push(&mut self, failed: bool) {
        if self.len == self.size {
            if self.get(self.head) {
                self.failures -= 1;
            }
        } else {
            self.len += 1;
        }
        self.set(self.head, failed);
        if failed {
            self.failures += 1;
        }
        self.head = if self.head + 1 == self.size {
            0
        } else {
            self.head + 1
        };
    }

    pub(super) fn clear(&mut self) {
        self.bits.iter_mut().for_each(|w| *w = 0);
        self.head = 0;
        self.len = 0;
        self.failures = 0;
    }

    /// Oldest first.
    pub(super) fn outcomes(&self) -> Vec<bool> {
        let start = (self.head + self.size - self.len) % self.size;
        (0..self.len)
            .map(|k| self.get((start + k) % self.size))
            .collect()
    }
}
