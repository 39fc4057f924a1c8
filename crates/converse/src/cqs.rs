//! Cqs — Converse's prioritised scheduler queue (S8, S9 in docs/sources.md; Charm++'s
//! `conv-core/queueing.C`).
//!
//! A priority is what `queueing.C` keys its deques on: a bit count `priobits`
//! and the `ceil(priobits / 32)` 32-bit words holding them, MSB of word 0
//! first.
//!
//! * A 32-bit integer priority `p` (IFIFO/ILIFO) is the one word `p + 2^31`
//!   (Converse's bias), 32 bits — so smaller integers come first.
//! * A 64-bit priority (LFIFO/LLIFO) is the two words of `p + 2^63`, high
//!   word first, 64 bits; a raw LLIFO with other `priobits` keeps only the
//!   words those bits cover ([`Strategy::LLifoBits`]).
//! * A bit-vector priority (BFIFO/BLIFO) is the given words, as given.
//!
//! **Order** (`CqsPrioGT`): word by word, unsigned; when one priority runs
//! out of words first it is the smaller, so a vector that is a prefix of a
//! longer one sorts first (`1` before `1 0`, the integer 0 before the long 0).
//! Bits past `priobits` in the last word are **not** masked away: they take
//! part in the order and in equality, as in `queueing.C`. Two priorities
//! share a deque only if both their words and their bit counts are equal
//! (`CqsPrioqGetDeq`); priorities with equal words but different bit counts
//! compare equal in `queueing.C` (their order is the heap's accident) and
//! are ordered here by bit count, fewer first, to stay deterministic.
//!
//! **Heaps**: entries whose priority is negative (an integer or long below
//! 0, a bit-vector whose first word has its top bit clear, the empty
//! bit-vector) go into the **negative** heap; the others into the
//! **positive** heap; plain FIFO/LIFO entries into the **zero** deque.
//! Dequeue order: negative heap, zero deque, positive heap — so an IFIFO
//! entry with priority 0 runs *after* every plain FIFO entry, and a negative
//! one before them. Each heap holds one deque per distinct priority; FIFO
//! strategies append to its back, LIFO ones push to its front.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// `CQS_QUEUEING_FIFO`: priority-0 deque, append.
pub const CQS_QUEUEING_FIFO: u32 = 2;
/// `CQS_QUEUEING_LIFO`: priority-0 deque, push to the front.
pub const CQS_QUEUEING_LIFO: u32 = 3;
/// `CQS_QUEUEING_IFIFO`: 32-bit signed integer priority, FIFO among equals.
pub const CQS_QUEUEING_IFIFO: u32 = 4;
/// `CQS_QUEUEING_ILIFO`: 32-bit signed integer priority, LIFO among equals.
pub const CQS_QUEUEING_ILIFO: u32 = 5;
/// `CQS_QUEUEING_BFIFO`: bit-vector priority, FIFO among equals.
pub const CQS_QUEUEING_BFIFO: u32 = 6;
/// `CQS_QUEUEING_BLIFO`: bit-vector priority, LIFO among equals.
pub const CQS_QUEUEING_BLIFO: u32 = 7;
/// `CQS_QUEUEING_LFIFO`: 64-bit signed priority, FIFO among equals.
pub const CQS_QUEUEING_LFIFO: u32 = 8;
/// `CQS_QUEUEING_LLIFO`: 64-bit signed priority, LIFO among equals.
pub const CQS_QUEUEING_LLIFO: u32 = 9;

/// A Cqs priority: `priobits` and the words holding them (see the module
/// docs for the order). The derived order compares the words
/// lexicographically — a prefix first —, then the bit count.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Prio {
    words: Vec<u32>,
    bits: u32,
    /// Which heap: decided by the strategy's value, not the words, because a
    /// raw LLIFO with few `priobits` keeps fewer words than its sign needs.
    positive: bool,
}

impl Prio {
    /// The priority of an IFIFO/ILIFO entry: the word `p + 2^31`, 32 bits.
    pub fn int(p: i32) -> Prio {
        Prio { words: vec![p as u32 ^ 0x8000_0000], bits: 32, positive: p >= 0 }
    }

    /// The priority of an LFIFO/LLIFO entry: the words of `p + 2^63`, high
    /// word first, 64 bits.
    pub fn long(p: i64) -> Prio {
        Prio::long_bits(p, 64).expect("64 bits fit")
    }

    /// A raw LLIFO's priority with `priobits` bits (`queueing.C` keys the deque
    /// on the first `ceil(priobits / 32)` words of `p + 2^63`, and picks the heap
    /// by its sign). `None` above 64 bits (`queueing.C` would read past the
    /// value).
    pub fn long_bits(p: i64, priobits: u32) -> Option<Prio> {
        if priobits > 64 {
            return None;
        }
        let v = (p as u64) ^ (1 << 63);
        let words = [(v >> 32) as u32, v as u32][..priobits.div_ceil(32) as usize].to_vec();
        Some(Prio { words, bits: priobits, positive: p >= 0 })
    }

    /// A bit-vector priority: `bits` bits in the first `ceil(bits / 32)` of
    /// `words`, MSB of `words[0]` first (Converse's `priobits`/`prioptr`). The
    /// bits past `bits` in the last word are kept, as `queueing.C` keeps them.
    ///
    /// # Panics
    /// If `words` holds fewer than `ceil(bits / 32)` words.
    pub fn bits(bits: u32, words: &[u32]) -> Prio {
        let n = bits.div_ceil(32) as usize;
        assert!(words.len() >= n, "bit-vector priority of {bits} bits needs {n} words, got {}", words.len());
        let words = words[..n].to_vec();
        // `priobits && (int)prioptr[0] < 0`: the empty vector is negative.
        let positive = words.first().is_some_and(|w| w >> 31 == 1);
        Prio { words, bits, positive }
    }

    /// Whether this priority goes into the positive heap.
    pub fn is_positive(&self) -> bool {
        self.positive
    }

    /// The words, `ceil(bits / 32)` of them, as given.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// `priobits`.
    pub fn bit_count(&self) -> u32 {
        self.bits
    }
}

/// How a message is queued (`CsdEnqueueGeneral`'s strategy + priority).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Priority-0 deque, append (`CsdEnqueueFifo`, `CsdEnqueue`).
    Fifo,
    /// Priority-0 deque, push front (`CsdEnqueueLifo`).
    Lifo,
    /// Integer priority, smaller first, FIFO among equals.
    IFifo(i32),
    /// Integer priority, smaller first, LIFO among equals.
    ILifo(i32),
    /// Bit-vector priority, numerically smaller first, FIFO among equals.
    BFifo(Prio),
    /// Bit-vector priority, numerically smaller first, LIFO among equals.
    BLifo(Prio),
    /// 64-bit priority, smaller first, FIFO among equals.
    LFifo(i64),
    /// 64-bit priority, smaller first, LIFO among equals.
    LLifo(i64),
    /// LLIFO with a raw `priobits` other than 64 ([`Strategy::from_raw`]): as
    /// in `queueing.C`, only the first `ceil(priobits / 32)` words of the
    /// biased value form the key, so longs that differ only past them share a
    /// deque (LIFO among them). At most 64 bits.
    LLifoBits(i64, u32),
}

impl Strategy {
    /// The `CQS_QUEUEING_*` constant of this strategy.
    pub fn queueing(&self) -> u32 {
        match self {
            Strategy::Fifo => CQS_QUEUEING_FIFO,
            Strategy::Lifo => CQS_QUEUEING_LIFO,
            Strategy::IFifo(_) => CQS_QUEUEING_IFIFO,
            Strategy::ILifo(_) => CQS_QUEUEING_ILIFO,
            Strategy::BFifo(_) => CQS_QUEUEING_BFIFO,
            Strategy::BLifo(_) => CQS_QUEUEING_BLIFO,
            Strategy::LFifo(_) => CQS_QUEUEING_LFIFO,
            Strategy::LLifo(_) | Strategy::LLifoBits(..) => CQS_QUEUEING_LLIFO,
        }
    }

    /// Converse's raw form: `(strategy, priobits, prioptr)`. Integer
    /// strategies read `prioptr[0]` as an `i32`; long strategies read
    /// `prioptr[0]` (low) and `prioptr[1]` (high) as an `i64`, the memory
    /// layout of a little-endian `CmiInt8`. As in `queueing.C`, integer
    /// strategies ignore `priobits`, LFIFO needs it to be 64 (its `CmiAssert`),
    /// and LLIFO honours it ([`Strategy::LLifoBits`] unless 64; at most 64).
    /// `None` for an unknown strategy, a `priobits` these rules refuse, or too
    /// few words.
    pub fn from_raw(queueing: u32, priobits: u32, prioptr: &[u32]) -> Option<Strategy> {
        let int = || prioptr.first().map(|&w| w as i32);
        let long = || match prioptr {
            [lo, hi, ..] => Some(((u64::from(*hi) << 32) | u64::from(*lo)) as i64),
            _ => None,
        };
        let bits = || (prioptr.len() >= priobits.div_ceil(32) as usize).then(|| Prio::bits(priobits, prioptr));
        Some(match queueing {
            CQS_QUEUEING_FIFO => Strategy::Fifo,
            CQS_QUEUEING_LIFO => Strategy::Lifo,
            CQS_QUEUEING_IFIFO => Strategy::IFifo(int()?),
            CQS_QUEUEING_ILIFO => Strategy::ILifo(int()?),
            CQS_QUEUEING_BFIFO => Strategy::BFifo(bits()?),
            CQS_QUEUEING_BLIFO => Strategy::BLifo(bits()?),
            CQS_QUEUEING_LFIFO if priobits == 64 => Strategy::LFifo(long()?),
            CQS_QUEUEING_LLIFO if priobits == 64 => Strategy::LLifo(long()?),
            CQS_QUEUEING_LLIFO if priobits < 64 => Strategy::LLifoBits(long()?, priobits),
            _ => return None,
        })
    }

    /// The priority (`None` for plain FIFO/LIFO) and whether LIFO.
    fn split(self) -> (Option<Prio>, bool) {
        match self {
            Strategy::Fifo => (None, false),
            Strategy::Lifo => (None, true),
            Strategy::IFifo(p) => (Some(Prio::int(p)), false),
            Strategy::ILifo(p) => (Some(Prio::int(p)), true),
            Strategy::BFifo(p) => (Some(p), false),
            Strategy::BLifo(p) => (Some(p), true),
            Strategy::LFifo(p) => (Some(Prio::long(p)), false),
            Strategy::LLifo(p) => (Some(Prio::long(p)), true),
            Strategy::LLifoBits(p, bits) => (Some(Prio::long_bits(p, bits.min(64)).expect("at most 64")), true),
        }
    }
}

/// Fx-style hasher: priorities are hashed on every enqueue.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A heap of per-priority deques (`negprioq` / `posprioq`).
struct PrioQueue<T> {
    /// Priorities whose deque is non-empty, smallest on top, with the slot.
    heap: BinaryHeap<Reverse<(Prio, usize)>>,
    /// Deques, kept after they empty so a recurring priority reuses one.
    slots: Vec<VecDeque<T>>,
    /// Priority → slot.
    index: HashMap<Prio, usize, BuildHasherDefault<FxHasher>>,
    len: usize,
}

impl<T> PrioQueue<T> {
    fn new() -> Self {
        PrioQueue { heap: BinaryHeap::new(), slots: Vec::new(), index: HashMap::default(), len: 0 }
    }

    fn push(&mut self, prio: Prio, lifo: bool, item: T) {
        let slot = match self.index.get(&prio) {
            Some(&s) => s,
            None => {
                self.slots.push(VecDeque::new());
                let s = self.slots.len() - 1;
                self.index.insert(prio.clone(), s);
                s
            }
        };
        let deq = &mut self.slots[slot];
        if deq.is_empty() {
            self.heap.push(Reverse((prio, slot)));
        }
        if lifo {
            deq.push_front(item);
        } else {
            deq.push_back(item);
        }
        self.len += 1;
    }

    fn pop(&mut self) -> Option<T> {
        let slot = self.heap.peek()?.0 .1;
        let deq = &mut self.slots[slot];
        let item = deq.pop_front().expect("heap holds only non-empty deques");
        if deq.is_empty() {
            self.heap.pop();
            if self.slots.len() > 64 + 2 * self.heap.len() {
                self.compact();
            }
        }
        self.len -= 1;
        Some(item)
    }

    /// Drop the cached empty deques (many distinct priorities came and went).
    fn compact(&mut self) {
        let live: Vec<(Prio, usize)> = self.heap.drain().map(|Reverse(e)| e).collect();
        let mut slots = Vec::with_capacity(live.len());
        self.index.clear();
        for (prio, old) in live {
            slots.push(std::mem::take(&mut self.slots[old]));
            let s = slots.len() - 1;
            self.index.insert(prio.clone(), s);
            self.heap.push(Reverse((prio, s)));
        }
        self.slots = slots;
    }
}

/// The prioritised scheduler queue: negative heap, zero deque, positive heap.
pub struct Cqs<T> {
    neg: PrioQueue<T>,
    zero: VecDeque<T>,
    pos: PrioQueue<T>,
}

impl<T> Default for Cqs<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Cqs<T> {
    /// An empty queue (`CqsCreate`).
    pub fn new() -> Self {
        Cqs { neg: PrioQueue::new(), zero: VecDeque::new(), pos: PrioQueue::new() }
    }

    /// Enqueue with a strategy (`CqsEnqueueGeneral`).
    pub fn enqueue(&mut self, item: T, strategy: Strategy) {
        match strategy.split() {
            (None, false) => self.zero.push_back(item),
            (None, true) => self.zero.push_front(item),
            (Some(p), lifo) if p.is_positive() => self.pos.push(p, lifo, item),
            (Some(p), lifo) => self.neg.push(p, lifo, item),
        }
    }

    /// `CqsEnqueueFifo`: priority-0 deque, append.
    pub fn enqueue_fifo(&mut self, item: T) {
        self.zero.push_back(item);
    }

    /// `CqsEnqueueLifo`: priority-0 deque, push front.
    pub fn enqueue_lifo(&mut self, item: T) {
        self.zero.push_front(item);
    }

    /// Remove the next entry (`CqsDequeue`): negative heap, zero deque,
    /// positive heap.
    pub fn dequeue(&mut self) -> Option<T> {
        if self.neg.len > 0 {
            return self.neg.pop();
        }
        if let Some(x) = self.zero.pop_front() {
            return Some(x);
        }
        self.pos.pop()
    }

    /// Number of queued entries (`CqsLength`).
    pub fn len(&self) -> usize {
        self.neg.len + self.zero.len() + self.pos.len
    }

    /// Whether nothing is queued (`CqsEmpty`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::Strategy; // not proptest's trait of the same name
    use super::*;
    use proptest::prelude::*;

    fn drain(q: &mut Cqs<u32>) -> Vec<u32> {
        std::iter::from_fn(|| q.dequeue()).collect()
    }

    #[test]
    fn strategy_constants_use_current_numbering() {
        let all = [
            (Strategy::Fifo, 2),
            (Strategy::Lifo, 3),
            (Strategy::IFifo(0), 4),
            (Strategy::ILifo(0), 5),
            (Strategy::BFifo(Prio::default()), 6),
            (Strategy::BLifo(Prio::default()), 7),
            (Strategy::LFifo(0), 8),
            (Strategy::LLifo(0), 9),
        ];
        for (s, n) in all {
            assert_eq!(s.queueing(), n);
            let bits = if n >= CQS_QUEUEING_LFIFO { 64 } else { 0 };
            let raw = Strategy::from_raw(n, bits, &[0, 0]).unwrap();
            assert_eq!(raw.queueing(), n);
        }
        // LFIFO asserts 64 bits in queueing.C; LLIFO honours fewer, not more.
        assert_eq!(Strategy::from_raw(CQS_QUEUEING_LFIFO, 32, &[0, 0]), None);
        assert_eq!(Strategy::from_raw(CQS_QUEUEING_LLIFO, 32, &[0, 0]), Some(Strategy::LLifoBits(0, 32)));
        assert_eq!(Strategy::from_raw(CQS_QUEUEING_LLIFO, 65, &[0, 0]), None);
        assert_eq!(Strategy::from_raw(0, 0, &[]), None);
        assert_eq!(Strategy::from_raw(CQS_QUEUEING_IFIFO, 32, &[]), None);
        assert_eq!(Strategy::from_raw(CQS_QUEUEING_LFIFO, 64, &[5, 1]), Some(Strategy::LFifo((1 << 32) | 5)));
        assert_eq!(Strategy::from_raw(CQS_QUEUEING_IFIFO, 32, &[(-3i32) as u32]), Some(Strategy::IFifo(-3)));
    }

    #[test]
    fn fifo_and_lifo_use_the_zero_deque() {
        let mut q = Cqs::new();
        q.enqueue(1, Strategy::Fifo);
        q.enqueue(2, Strategy::Fifo);
        q.enqueue(3, Strategy::Lifo);
        q.enqueue_lifo(4);
        q.enqueue_fifo(5);
        assert_eq!(q.len(), 5);
        assert_eq!(drain(&mut q), vec![4, 3, 1, 2, 5]);
        assert!(q.is_empty());
    }

    #[test]
    fn integer_priorities_smaller_first_and_zero_after_plain_fifo() {
        let mut q = Cqs::new();
        q.enqueue(10, Strategy::IFifo(5));
        q.enqueue(11, Strategy::IFifo(0));
        q.enqueue(12, Strategy::Fifo);
        q.enqueue(13, Strategy::IFifo(-1));
        q.enqueue(14, Strategy::IFifo(i32::MIN));
        q.enqueue(15, Strategy::IFifo(i32::MAX));
        q.enqueue(16, Strategy::IFifo(5));
        q.enqueue(17, Strategy::ILifo(5));
        // negative heap, zero deque, then positive heap (int 0 is positive)
        assert_eq!(drain(&mut q), vec![14, 13, 12, 11, 17, 10, 16, 15]);
    }

    #[test]
    fn long_priorities() {
        let mut q = Cqs::new();
        q.enqueue(1, Strategy::LFifo(1 << 40));
        q.enqueue(2, Strategy::LFifo(-(1 << 40)));
        q.enqueue(3, Strategy::LLifo(1 << 40));
        q.enqueue(4, Strategy::LFifo(i64::MIN));
        q.enqueue(5, Strategy::Fifo);
        assert_eq!(drain(&mut q), vec![4, 2, 5, 3, 1]);
    }

    #[test]
    fn bit_vector_priorities_compare_whole_words() {
        let b = |bits, w: &[u32]| Prio::bits(bits, w);
        // "01" (¼) < "1" (½) < "11" (¾); the empty vector is smallest.
        assert!(b(2, &[0x4000_0000]) < b(1, &[0x8000_0000]));
        assert!(b(1, &[0x8000_0000]) < b(2, &[0xC000_0000]));
        assert!(b(0, &[]) < b(2, &[0x4000_0000]));
        assert!(!b(0, &[]).is_positive());
        assert!(b(1, &[0x8000_0000]).is_positive());
        // Same words, other bit count: another deque, ordered by bit count.
        assert_ne!(b(1, &[0x8000_0000]), b(2, &[0x8000_0000]));
        assert!(b(1, &[0x8000_0000]) < b(2, &[0x8000_0000]));
        // A prefix sorts first: a trailing zero word is not dropped.
        assert!(b(96, &[1, 2, 3]) < b(100, &[1, 2, 3, 0]));
        assert_eq!(b(100, &[1, 2, 3, 0]).words(), &[1, 2, 3, 0]);
        assert!(b(100, &[1, 2, 3, 0]) < b(100, &[1, 2, 3, 0x1000_0000]));
        // Bits past priobits are part of the priority.
        assert!(b(1, &[0x8000_0000]) < b(1, &[0xFFFF_FFFF]));
        // The integer 0 (one word) is a prefix of the long 0 (two words).
        assert!(Prio::int(0) < Prio::long(0));
        assert!(Prio::int(-1) < Prio::int(0));
        assert!(Prio::long(-1) > Prio::int(-1));
    }

    #[test]
    fn a_prefix_vector_runs_before_the_longer_one() {
        // Canonicalised (trailing zero words dropped), the two were one
        // priority and ran in FIFO order: 1 then 2.
        let mut q = Cqs::new();
        q.enqueue(1, Strategy::BFifo(Prio::bits(64, &[0xC000_0000, 0])));
        q.enqueue(2, Strategy::BFifo(Prio::bits(32, &[0xC000_0000])));
        q.enqueue(3, Strategy::LFifo(0));
        q.enqueue(4, Strategy::IFifo(0));
        assert_eq!(drain(&mut q), vec![4, 3, 2, 1]);
    }

    #[test]
    fn bits_past_priobits_are_not_masked() {
        // Masked, both were "1" and ran in FIFO order: 1 then 2.
        let mut q = Cqs::new();
        q.enqueue(1, Strategy::BFifo(Prio::bits(1, &[0xFFFF_FFFF])));
        q.enqueue(2, Strategy::BFifo(Prio::bits(1, &[0x8000_0000])));
        assert_eq!(drain(&mut q), vec![2, 1]);
    }

    #[test]
    fn llifo_honours_priobits() {
        // 32 bits: only the high word of p + 2^63 is the key, so 3 and 5 share
        // a deque and the later one runs first. With priobits ignored they were
        // two priorities and ran 3 then 5.
        let raw = |p: i64| [p as u32, (p >> 32) as u32];
        let mut q = Cqs::new();
        q.enqueue(3, Strategy::from_raw(CQS_QUEUEING_LLIFO, 32, &raw(3)).unwrap());
        q.enqueue(5, Strategy::from_raw(CQS_QUEUEING_LLIFO, 32, &raw(5)).unwrap());
        q.enqueue(40, Strategy::from_raw(CQS_QUEUEING_LLIFO, 32, &raw(1 << 40)).unwrap());
        assert_eq!(drain(&mut q), vec![5, 3, 40]);
        // 64 bits: the whole value.
        q.enqueue(3, Strategy::from_raw(CQS_QUEUEING_LLIFO, 64, &raw(3)).unwrap());
        q.enqueue(5, Strategy::from_raw(CQS_QUEUEING_LLIFO, 64, &raw(5)).unwrap());
        assert_eq!(drain(&mut q), vec![3, 5]);
        // 0 bits: one key for all, the heap still chosen by the sign.
        q.enqueue(7, Strategy::Fifo);
        q.enqueue(8, Strategy::from_raw(CQS_QUEUEING_LLIFO, 0, &raw(9)).unwrap());
        q.enqueue(9, Strategy::from_raw(CQS_QUEUEING_LLIFO, 0, &raw(-9)).unwrap());
        assert_eq!(drain(&mut q), vec![9, 7, 8]);
    }

    #[test]
    fn bit_vectors_in_the_queue() {
        let b = |bits, w: &[u32]| Prio::bits(bits, w);
        let mut q = Cqs::new();
        q.enqueue(1, Strategy::BFifo(b(1, &[0x8000_0000]))); // ½, positive
        q.enqueue(2, Strategy::BFifo(b(2, &[0x4000_0000]))); // ¼, negative
        q.enqueue(3, Strategy::Fifo);
        q.enqueue(4, Strategy::BLifo(b(1, &[0x8000_0000]))); // ½ again, LIFO
        q.enqueue(5, Strategy::BFifo(b(0, &[]))); // empty
        q.enqueue(6, Strategy::BFifo(b(2, &[0xC000_0000]))); // ¾
        q.enqueue(7, Strategy::BFifo(b(2, &[0x8000_0000]))); // ½ in 2 bits: after 1 bit
        assert_eq!(drain(&mut q), vec![5, 2, 3, 4, 1, 7, 6]);
    }

    #[test]
    #[should_panic(expected = "needs 2 words")]
    fn bit_vector_needs_enough_words() {
        Prio::bits(33, &[1]);
    }

    #[test]
    fn many_distinct_priorities_compact_the_deque_cache() {
        let mut q = Cqs::new();
        for round in 0..10u32 {
            for i in 0..500 {
                q.enqueue(i, Strategy::IFifo((round * 1000 + i) as i32));
            }
            assert_eq!(drain(&mut q), (0..500).collect::<Vec<_>>());
        }
        assert!(q.pos.slots.len() <= 64 + 500);
        q.enqueue(7, Strategy::IFifo(3));
        q.enqueue(8, Strategy::IFifo(2));
        assert_eq!(drain(&mut q), vec![8, 7]);
    }

    // ---- property test against a reference model --------------------------

    /// Independent model of a priority, from the strategy's values: the
    /// heap class (0 negative, 1 zero deque, 2 positive) and the key words
    /// with the bit count.
    fn model_key(s: &Strategy) -> (u8, Vec<u32>, u32) {
        let long = |p: i64| {
            let v = (p as i128 + (1i128 << 63)) as u64;
            vec![(v >> 32) as u32, v as u32]
        };
        match s {
            Strategy::Fifo | Strategy::Lifo => (1, vec![], 0),
            Strategy::IFifo(p) | Strategy::ILifo(p) => {
                (if *p >= 0 { 2 } else { 0 }, vec![(*p as i64 + (1i64 << 31)) as u32], 32)
            }
            Strategy::LFifo(p) | Strategy::LLifo(p) => (if *p >= 0 { 2 } else { 0 }, long(*p), 64),
            Strategy::LLifoBits(p, bits) => {
                let mut w = long(*p);
                w.truncate(bits.div_ceil(32) as usize);
                (if *p >= 0 { 2 } else { 0 }, w, *bits)
            }
            Strategy::BFifo(p) | Strategy::BLifo(p) => {
                let w = p.words().to_vec();
                (if !w.is_empty() && w[0] >= 0x8000_0000 { 2 } else { 0 }, w, p.bit_count())
            }
        }
    }

    /// `CqsPrioGT`'s order, written out: word by word, the shorter first,
    /// then (our tie-break) the bit count.
    fn model_cmp(a: &(u8, Vec<u32>, u32), b: &(u8, Vec<u32>, u32)) -> std::cmp::Ordering {
        if a.0 != b.0 {
            return a.0.cmp(&b.0);
        }
        for i in 0.. {
            match (a.1.get(i), b.1.get(i)) {
                (None, None) => break,
                (None, Some(_)) => return std::cmp::Ordering::Less,
                (Some(_), None) => return std::cmp::Ordering::Greater,
                (Some(x), Some(y)) if x != y => return x.cmp(y),
                _ => {}
            }
        }
        a.2.cmp(&b.2)
    }

    #[derive(Clone, Debug)]
    enum Op {
        Enq(Strategy),
        Deq,
    }

    fn arb_strategy() -> impl Strategy_<Value = Strategy> {
        let small_int = prop_oneof![-3i32..=3, Just(i32::MIN), Just(i32::MAX), any::<i32>()];
        let small_long = prop_oneof![-3i64..=3, Just(i64::MIN), Just(i64::MAX), Just(1i64 << 32), any::<i64>()];
        let word = prop_oneof![
            Just(0u32),
            Just(0x8000_0000u32),
            Just(0x4000_0000u32),
            Just(0xC000_0000u32),
            Just(u32::MAX),
            any::<u32>()
        ];
        let bitvec =
            (0u32..=100, proptest::collection::vec(word, 4)).prop_map(|(bits, words)| Prio::bits(bits, &words));
        let long_bits = (small_long.clone(), 0u32..64).prop_map(|(p, b)| Strategy::LLifoBits(p, b));
        prop_oneof![
            Just(Strategy::Fifo),
            Just(Strategy::Lifo),
            small_int.clone().prop_map(Strategy::IFifo),
            small_int.prop_map(Strategy::ILifo),
            bitvec.clone().prop_map(Strategy::BFifo),
            bitvec.prop_map(Strategy::BLifo),
            small_long.clone().prop_map(Strategy::LFifo),
            small_long.prop_map(Strategy::LLifo),
            long_bits,
        ]
    }
    use proptest::strategy::Strategy as Strategy_;

    fn arb_ops() -> impl Strategy_<Value = Vec<Op>> {
        proptest::collection::vec(prop_oneof![3 => arb_strategy().prop_map(Op::Enq), 1 => Just(Op::Deq)], 0..200)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Cqs dequeues exactly what the model (sort by class, priority,
        /// then sequence — reversed for LIFO) says, at every step.
        #[test]
        fn cqs_matches_reference_model(ops in arb_ops()) {
            // (key, lifo-first, signed sequence, item)
            type Entry = ((u8, Vec<u32>, u32), u8, i64, u32);
            let cmp = |a: &Entry, b: &Entry| model_cmp(&a.0, &b.0).then((a.1, a.2).cmp(&(b.1, b.2)));
            let mut model: Vec<Entry> = Vec::new();
            let mut q = Cqs::new();
            for (seq, op) in ops.into_iter().enumerate() {
                let seq = seq as i64;
                match op {
                    Op::Enq(s) => {
                        let lifo = matches!(
                            s,
                            Strategy::Lifo
                                | Strategy::ILifo(_)
                                | Strategy::BLifo(_)
                                | Strategy::LLifo(_)
                                | Strategy::LLifoBits(..)
                        );
                        let key = if lifo { (0, -seq) } else { (1, seq) };
                        model.push((model_key(&s), key.0, key.1, seq as u32));
                        q.enqueue(seq as u32, s);
                    }
                    Op::Deq => {
                        let want = model
                            .iter()
                            .enumerate()
                            .min_by(|a, b| cmp(a.1, b.1))
                            .map(|(i, _)| i)
                            .map(|i| model.remove(i).3);
                        prop_assert_eq!(q.dequeue(), want);
                    }
                }
                prop_assert_eq!(q.len(), model.len());
            }
            // drain the rest in model order
            model.sort_by(cmp);
            let rest: Vec<u32> = std::iter::from_fn(|| q.dequeue()).collect();
            prop_assert_eq!(rest, model.into_iter().map(|m| m.3).collect::<Vec<_>>());
        }

        /// Prio's order is the model's within a heap.
        #[test]
        fn prio_order_is_the_models(a in arb_strategy(), b in arb_strategy()) {
            let pa = a.clone().split().0;
            let pb = b.clone().split().0;
            if let (Some(pa), Some(pb)) = (pa, pb) {
                prop_assert_eq!(pa.is_positive(), model_key(&a).0 == 2);
                let (ka, kb) = (model_key(&a), model_key(&b));
                if ka.0 == kb.0 {
                    prop_assert_eq!(pa.cmp(&pb), model_cmp(&ka, &kb));
                }
            }
        }
    }
}
