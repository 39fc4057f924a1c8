//! Cqs — Converse's prioritised scheduler queue (spec §4.3, `queueing.c`).
//!
//! Every prioritised entry lives in one number space: a priority is a binary
//! fraction in `[0, 1)`, written MSB-first.
//!
//! * A 32-bit integer priority `p` (IFIFO/ILIFO) is the 32-bit fraction
//!   `p + 2^31` — Converse's bias — so smaller integers come first.
//! * A 64-bit priority (LFIFO/LLIFO) is the 64-bit fraction `p + 2^63`.
//! * A bit-vector priority (BFIFO/BLIFO) is the given `priobits` bits of the
//!   given words, MSB of word 0 first; missing bits are zeros.
//!
//! Entries whose fraction has its top bit clear (negative integers and longs,
//! bit-vectors below ½, the empty bit-vector) go into the **negative** heap;
//! entries with the top bit set (integers and longs ≥ 0, bit-vectors ≥ ½) go
//! into the **positive** heap; plain FIFO/LIFO entries go into the **zero**
//! deque. Dequeue order: negative heap, zero deque, positive heap — so, as in
//! Converse, an IFIFO entry with priority 0 runs *after* every plain FIFO
//! entry, and a negative one before them.
//!
//! Each heap holds one deque per distinct priority; FIFO strategies append to
//! the back of their priority's deque, LIFO ones push to the front.
//!
//! Deviation from `queueing.c`: priorities are canonicalised (trailing zero
//! bits are not significant), so bit-vectors `1` and `10`, the integer 0 and
//! the long 0 are *one* priority and share a deque. `queueing.c` keeps
//! numerically equal priorities of different lengths in separate deques
//! (and orders them arbitrarily); here they obey FIFO/LIFO among equals.

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

/// A canonical priority: a binary fraction in `[0, 1)`.
///
/// `hi` holds the first 64 bits; `rest` the following 32-bit words with
/// trailing zero words removed, so the derived lexicographic order is the
/// numeric order and equality is numeric equality.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Prio {
    hi: u64,
    rest: Vec<u32>,
}

impl Prio {
    /// The priority of an IFIFO/ILIFO entry: `p + 2^31` as a 32-bit fraction.
    pub fn int(p: i32) -> Prio {
        Prio { hi: u64::from(p as u32 ^ 0x8000_0000) << 32, rest: Vec::new() }
    }

    /// The priority of an LFIFO/LLIFO entry: `p + 2^63` as a 64-bit fraction.
    pub fn long(p: i64) -> Prio {
        Prio { hi: (p as u64) ^ (1 << 63), rest: Vec::new() }
    }

    /// A bit-vector priority: the first `bits` bits of `words`, MSB of
    /// `words[0]` first (Converse's `priobits`/`prioptr`). Bits past `bits`
    /// in the last word are ignored.
    ///
    /// # Panics
    /// If `words` holds fewer than `ceil(bits / 32)` words.
    pub fn bits(bits: u32, words: &[u32]) -> Prio {
        let n = bits.div_ceil(32) as usize;
        assert!(words.len() >= n, "bit-vector priority of {bits} bits needs {n} words, got {}", words.len());
        let word = |i: usize| -> u32 {
            if i >= n {
                return 0;
            }
            let w = words[i];
            let used = bits - 32 * i as u32; // bits of this word that count
            if used >= 32 {
                w
            } else {
                w & !(u32::MAX >> used)
            }
        };
        let hi = (u64::from(word(0)) << 32) | u64::from(word(1));
        let mut rest: Vec<u32> = (2..n).map(word).collect();
        while rest.last() == Some(&0) {
            rest.pop();
        }
        Prio { hi, rest }
    }

    /// Whether this priority is at least ½ (Converse's positive heap).
    pub fn is_positive(&self) -> bool {
        self.hi >> 63 == 1
    }

    /// The fraction as MSB-first 32-bit words, trailing zero words removed.
    pub fn words(&self) -> Vec<u32> {
        let mut w = vec![(self.hi >> 32) as u32, self.hi as u32];
        w.extend_from_slice(&self.rest);
        while w.last() == Some(&0) {
            w.pop();
        }
        w
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
            Strategy::LLifo(_) => CQS_QUEUEING_LLIFO,
        }
    }

    /// Converse's raw form: `(strategy, priobits, prioptr)`. Integer
    /// strategies read `prioptr[0]` as an `i32`; long strategies read
    /// `prioptr[0]` (low) and `prioptr[1]` (high) as an `i64`, the memory
    /// layout of a little-endian `CmiInt8`. `None` for an unknown strategy
    /// or too few words.
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
            CQS_QUEUEING_LFIFO => Strategy::LFifo(long()?),
            CQS_QUEUEING_LLIFO => Strategy::LLifo(long()?),
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
            let raw = Strategy::from_raw(n, 0, &[0, 0]).unwrap();
            assert_eq!(raw.queueing(), n);
        }
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
    fn bit_vector_priorities_are_padded_binary_fractions() {
        let b = |bits, w: &[u32]| Prio::bits(bits, w);
        // "01" (¼) < "1" (½) == "10" < "11" (¾); empty = 0 is smallest.
        assert!(b(2, &[0x4000_0000]) < b(1, &[0x8000_0000]));
        assert_eq!(b(1, &[0x8000_0000]), b(2, &[0x8000_0000]));
        assert_eq!(b(1, &[0xFFFF_FFFF]), b(1, &[0x8000_0000])); // masked
        assert!(b(0, &[]) < b(2, &[0x4000_0000]));
        assert!(!b(0, &[]).is_positive());
        assert!(b(1, &[0x8000_0000]).is_positive());
        // long vectors: only a later non-zero word makes a difference
        let long_a = b(100, &[1, 2, 3, 0]);
        let long_b = b(96, &[1, 2, 3]);
        assert_eq!(long_a, long_b);
        assert!(b(100, &[1, 2, 3, 0x1000_0000]) > long_b);
        assert_eq!(long_a.words(), vec![1, 2, 3]);
        // integer 0 == bit-vector ½ == long 0: one number space
        assert_eq!(Prio::int(0), b(1, &[0x8000_0000]));
        assert_eq!(Prio::long(0), Prio::int(0));
        assert!(Prio::int(-1) < Prio::int(0));
        // cross-width comparisons compare fractions: -1 + 2^63 over 2^64 is
        // closer to ½ than -1 + 2^31 over 2^32
        assert!(Prio::long(-1) > Prio::int(-1));

        let mut q = Cqs::new();
        q.enqueue(1, Strategy::BFifo(b(1, &[0x8000_0000]))); // ½, positive
        q.enqueue(2, Strategy::BFifo(b(2, &[0x4000_0000]))); // ¼, negative
        q.enqueue(3, Strategy::Fifo);
        q.enqueue(4, Strategy::BLifo(b(2, &[0x8000_0000]))); // ½ again, LIFO
        q.enqueue(5, Strategy::BFifo(b(0, &[]))); // 0
        q.enqueue(6, Strategy::BFifo(b(2, &[0xC000_0000]))); // ¾
        assert_eq!(drain(&mut q), vec![5, 2, 3, 4, 1, 6]);
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

    /// Independent model of a priority: MSB-first bits, trailing zeros cut.
    fn model_bits(s: &Strategy) -> Vec<bool> {
        let from_word_bits = |v: u64, n: u32| (0..n).map(move |i| (v >> (n - 1 - i)) & 1 == 1);
        let mut bits: Vec<bool> = match s {
            Strategy::Fifo | Strategy::Lifo => vec![],
            Strategy::IFifo(p) | Strategy::ILifo(p) => {
                from_word_bits(u64::from((*p as i64 + (1i64 << 31)) as u32), 32).collect()
            }
            Strategy::LFifo(p) | Strategy::LLifo(p) => {
                from_word_bits((*p as i128 + (1i128 << 63)) as u64, 64).collect()
            }
            Strategy::BFifo(p) | Strategy::BLifo(p) => {
                p.words().iter().flat_map(|&w| from_word_bits(u64::from(w), 32)).collect()
            }
        };
        while bits.last() == Some(&false) {
            bits.pop();
        }
        bits
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
        prop_oneof![
            Just(Strategy::Fifo),
            Just(Strategy::Lifo),
            small_int.clone().prop_map(Strategy::IFifo),
            small_int.prop_map(Strategy::ILifo),
            bitvec.clone().prop_map(Strategy::BFifo),
            bitvec.prop_map(Strategy::BLifo),
            small_long.clone().prop_map(Strategy::LFifo),
            small_long.prop_map(Strategy::LLifo),
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
            // (class, bits, lifo-first, signed sequence, item)
            let mut model: Vec<(u8, Vec<bool>, u8, i64, u32)> = Vec::new();
            let mut q = Cqs::new();
            for (seq, op) in ops.into_iter().enumerate() {
                let seq = seq as i64;
                match op {
                    Op::Enq(s) => {
                        let bits = model_bits(&s);
                        let lifo = matches!(
                            s,
                            Strategy::Lifo | Strategy::ILifo(_) | Strategy::BLifo(_) | Strategy::LLifo(_)
                        );
                        let class = match s {
                            Strategy::Fifo | Strategy::Lifo => 1,
                            _ if bits.first() == Some(&true) => 2,
                            _ => 0,
                        };
                        let key = if lifo { (0, -seq) } else { (1, seq) };
                        model.push((class, bits, key.0, key.1, seq as u32));
                        q.enqueue(seq as u32, s);
                    }
                    Op::Deq => {
                        let want = model
                            .iter()
                            .enumerate()
                            .min_by(|a, b| (a.1.0, &a.1.1, a.1.2, a.1.3).cmp(&(b.1.0, &b.1.1, b.1.2, b.1.3)))
                            .map(|(i, _)| i)
                            .map(|i| model.remove(i).4);
                        prop_assert_eq!(q.dequeue(), want);
                    }
                }
                prop_assert_eq!(q.len(), model.len());
            }
            // drain the rest in model order
            model.sort_by(|a, b| (a.0, &a.1, a.2, a.3).cmp(&(b.0, &b.1, b.2, b.3)));
            let rest: Vec<u32> = std::iter::from_fn(|| q.dequeue()).collect();
            prop_assert_eq!(rest, model.into_iter().map(|m| m.4).collect::<Vec<_>>());
        }

        /// Prio's order is the numeric order of the padded bit strings.
        #[test]
        fn prio_order_is_numeric(a in arb_strategy(), b in arb_strategy()) {
            let pa = a.clone().split().0;
            let pb = b.clone().split().0;
            if let (Some(pa), Some(pb)) = (pa, pb) {
                prop_assert_eq!(pa.cmp(&pb), model_bits(&a).cmp(&model_bits(&b)));
            }
        }
    }
}
