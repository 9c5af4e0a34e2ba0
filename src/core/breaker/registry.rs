//! A bounded map of breakers by name (one per origin): the memory bound of a registry that URLs
//! built from client input can grow, and the rule that keeps it from trading away protection.
//!
//! Why a rule and not plain LRU: a registry that drops its oldest entry lets any caller who can
//! make it see many names (a server fetching user-supplied URLs) evict the payment gateway's
//! breaker between two payment calls, and the gateway's failures are forgotten every time. Here an
//! entry is dropped only if it is [`evictable`](super::evictable): not pinned by the caller, and
//! its breaker holds no protection (closed, no failure on record). When none is, nothing is
//! dropped and the newcomer's breaker is not kept (its limit: a flood of failing names fills the
//! registry, and new names then go without a remembered breaker until one of those closes).

use std::collections::HashMap;

/// Names to breakers (of any kind `T`: the core's [`super::Breaker`] natively, the Rust shell's
/// handle in `web`): at most `max` entries, except that pinned ones are kept past it.
#[derive(Debug, Clone)]
pub struct Registry<T> {
    max: usize,
    next: u64,
    entries: HashMap<String, Entry<T>>,
}

#[derive(Debug, Clone)]
struct Entry<T> {
    /// Insertion order: the oldest evictable entry goes first.
    seq: u64,
    pinned: bool,
    value: T,
}

impl<T: Clone> Registry<T> {
    /// An empty registry that keeps at most `max` entries (at least 1) besides pinned ones.
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            next: 0,
            entries: HashMap::new(),
        }
    }

    /// How many entries are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `name` has a kept entry.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The entry of `name`, made with `make` on first use. `holds_protection` tells whether a
    /// kept breaker must stay ([`super::Breaker::holds_protection`]). When the registry is full,
    /// the oldest evictable entry is dropped; when none is, the new breaker is returned but not
    /// kept.
    pub fn get_or_insert_with(
        &mut self,
        name: &str,
        holds_protection: impl Fn(&T) -> bool,
        make: impl FnOnce() -> T,
    ) -> T {
        self.entry(name, false, holds_protection, make)
    }

    /// Like [`Registry::get_or_insert_with`], and pins the entry: it is never evicted (the
    /// endpoints an app depends on). A pinned entry is always kept, even past `max`.
    pub fn pin(
        &mut self,
        name: &str,
        holds_protection: impl Fn(&T) -> bool,
        make: impl FnOnce() -> T,
    ) -> T {
        self.entry(name, true, holds_protection, make)
    }

    fn entry(
        &mut self,
        name: &str,
        pin: bool,
        holds_protection: impl Fn(&T) -> bool,
        make: impl FnOnce() -> T,
    ) -> T {
        if let Some(e) = self.entries.get_mut(name) {
            e.pinned |= pin;
            return e.value.clone();
        }
        let value = make();
        if !pin && self.entries.len() >= self.max {
            let victim = self
                .entries
                .iter()
                .filter(|(_, e)| super::evictable_by(e.pinned, holds_protection(&e.value)))
                .min_by_key(|(_, e)| e.seq)
                .map(|(k, _)| k.clone());
            match victim {
                Some(k) => {
                    self.entries.remove(&k);
                }
                None => return value,
            }
        }
        self.next += 1;
        self.entries.insert(
            name.into(),
            Entry {
                seq: self.next,
                pinned: pin,
                value: value.clone(),
            },
        );
        value
    }
}
