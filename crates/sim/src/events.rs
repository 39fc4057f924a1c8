//! Event kinds, and the queue for events not tied to a CPU slot (sleep timers): a
//! binary heap ordered by (virtual time, insertion sequence), so simultaneous events
//! run in the order they were scheduled — deterministically. Each CPU's step, tick and
//! IPI live in fixed slots in the engine instead (no stale entries, no heap traffic).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A CPU reaches the end of its current step (kernel operation or compute segment).
    Step { cpu: u32 },
    /// Timer interrupt on a CPU.
    Tick { cpu: u32 },
    /// A reschedule IPI arrives at a CPU.
    Ipi { cpu: u32 },
    /// A sleeping task's timer expires.
    Wake { task: u32 },
}

/// Packed into one `u128` key plus payload so heap operations stay cheap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    key: u128,
    payload: u64,
}

pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

fn encode(k: Kind) -> u64 {
    match k {
        Kind::Step { cpu } => cpu as u64,
        Kind::Tick { cpu } => 1 << 62 | cpu as u64,
        Kind::Ipi { cpu } => 2 << 62 | cpu as u64,
        Kind::Wake { task } => 3 << 62 | task as u64,
    }
}

fn decode(x: u64) -> Kind {
    let lo = (x & 0xffff_ffff) as u32;
    match x >> 62 {
        0 => Kind::Step { cpu: lo },
        1 => Kind::Tick { cpu: lo },
        2 => Kind::Ipi { cpu: lo },
        _ => Kind::Wake { task: lo },
    }
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> EventQueue {
        EventQueue { heap: BinaryHeap::with_capacity(n), seq: 0 }
    }
    #[inline]
    pub fn push(&mut self, time: u64, kind: Kind) {
        self.seq += 1;
        self.heap.push(Reverse(Entry { key: (time as u128) << 64 | self.seq as u128, payload: encode(kind) }));
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Kind)> {
        self.heap.pop().map(|Reverse(e)| ((e.key >> 64) as u64, decode(e.payload)))
    }
    #[inline]
    pub fn peek(&self) -> Option<(u64, Kind)> {
        self.heap.peek().map(|Reverse(e)| ((e.key >> 64) as u64, decode(e.payload)))
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::with_capacity(4);
        q.push(5, Kind::Tick { cpu: 1 });
        q.push(3, Kind::Wake { task: 77 });
        q.push(5, Kind::Step { cpu: 2 });
        q.push(3, Kind::Ipi { cpu: 9 });
        assert_eq!(q.pop(), Some((3, Kind::Wake { task: 77 })));
        assert_eq!(q.pop(), Some((3, Kind::Ipi { cpu: 9 })));
        assert_eq!(q.pop(), Some((5, Kind::Tick { cpu: 1 })));
        assert_eq!(q.pop(), Some((5, Kind::Step { cpu: 2 })));
        assert_eq!(q.pop(), None);
    }
}
