//! The program cursor: where a task is in its program, and its open loops.
//!
//! Both engines step programs with this one type (the simulator in virtual time, the
//! interpreter of `schedlab-rtrun` on the real runtime), so loop control can only ever mean
//! one thing. The shape is fetch-then-advance: [`Cursor::fetch`] resolves loop ends
//! and `Loop` headers and returns the operation to execute *without* moving past it;
//! the engine calls [`Cursor::advance`] once that operation has completed. A `Recv`
//! that blocks is therefore fetched again after the wake-up, and is the same op.
//!
//! The loop frames live in a fixed array ([`MAX_LOOP_DEPTH`], enforced by
//! [`Workload::validate`](crate::Workload::validate)): a cursor never allocates, which
//! matters in the simulator's event loop.

use crate::Op;

/// Deepest loop nesting a program may use.
pub const MAX_LOOP_DEPTH: usize = 4;

/// One open loop: its body is `start..end`, to be run `left` more times (counting the
/// current iteration).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LoopFrame {
    start: u32,
    end: u32,
    left: u32,
}

/// A position in one program, with its loop frames.
///
/// Positions are indices into the op slice passed to [`fetch`](Cursor::fetch). That
/// slice may be the program itself ([`Cursor::new`]) or many programs concatenated
/// (the simulator keeps one array for cache locality; [`Cursor::at`] takes the
/// program's range in it).
#[derive(Clone, Debug)]
pub struct Cursor {
    pc: u32,
    /// End of the program: fetching at or past it yields `Op::Exit`.
    end: u32,
    loops: [LoopFrame; MAX_LOOP_DEPTH],
    depth: u8,
    /// End of the innermost open loop's body (`u32::MAX` with none open): the one
    /// position where `fetch` has loop work to do, so every other fetch compares the
    /// position with it once instead of reading the frame (the simulator fetches an
    /// operation at nearly every event).
    loop_end: u32,
}

impl Cursor {
    /// At the first op of `program`, which will be passed whole to `fetch`.
    pub fn new(program: &[Op]) -> Cursor {
        Cursor::at(0, program.len() as u32)
    }

    /// At the first op of the program stored at `start..end` of the slice that will be
    /// passed to `fetch`.
    pub fn at(start: u32, end: u32) -> Cursor {
        Cursor { pc: start, end, loops: [LoopFrame::default(); MAX_LOOP_DEPTH], depth: 0, loop_end: u32::MAX }
    }

    /// The operation to execute next, after closing finished loop iterations and
    /// entering `Loop` headers (a `Loop` with an empty body is skipped). Past the end of
    /// the program this is `Op::Exit`. Does not move past the returned op: calling it
    /// again without [`advance`](Cursor::advance) returns the same op.
    ///
    /// Panics if loops nest deeper than [`MAX_LOOP_DEPTH`] (validated workloads do not).
    #[inline]
    pub fn fetch(&mut self, ops: &[Op]) -> Op {
        loop {
            if self.pc == self.loop_end {
                self.close_iteration();
                continue;
            }
            if self.pc >= self.end {
                return Op::Exit;
            }
            match ops.get(self.pc as usize) {
                None => return Op::Exit,
                Some(&Op::Loop { count, body }) => {
                    self.pc += 1;
                    if body == 0 {
                        continue;
                    }
                    assert!((self.depth as usize) < MAX_LOOP_DEPTH, "loops nest deeper than {MAX_LOOP_DEPTH}");
                    self.loops[self.depth as usize] = LoopFrame { start: self.pc, end: self.pc + body, left: count };
                    self.depth += 1;
                    self.loop_end = self.pc + body;
                }
                Some(&op) => return op,
            }
        }
    }

    /// At the end of the innermost loop's body: run it again, or leave the loop.
    /// (Not rare: a short loop body closes an iteration every few fetches.)
    #[inline(always)]
    fn close_iteration(&mut self) {
        debug_assert!(self.depth > 0 && self.pc == self.loops[self.depth as usize - 1].end);
        let f = &mut self.loops[self.depth as usize - 1];
        f.left -= 1;
        if f.left > 0 {
            self.pc = f.start;
        } else {
            self.depth -= 1;
            // Loops ending together: the enclosing body ends here too, and the next
            // round of `fetch` closes it.
            self.loop_end = if self.depth > 0 { self.loops[self.depth as usize - 1].end } else { u32::MAX };
        }
    }

    /// Move past the op the last [`fetch`](Cursor::fetch) returned (it has completed).
    #[inline]
    pub fn advance(&mut self) {
        self.pc += 1;
    }

    /// Index of the next op to look at (in the slice given to `fetch`).
    pub fn pc(&self) -> u32 {
        self.pc
    }

    /// Number of loops currently open.
    pub fn depth(&self) -> usize {
        self.depth as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Op = Op::Yield;
    const B: Op = Op::Sleep { ns: 1 };
    const C: Op = Op::Compute { cycles: 7 };

    /// Every op the cursor yields until `Exit`, advancing after each.
    fn trace(ops: &[Op], mut c: Cursor) -> Vec<Op> {
        let mut out = Vec::new();
        loop {
            let op = c.fetch(ops);
            if op == Op::Exit {
                return out;
            }
            out.push(op);
            c.advance();
            assert!(out.len() < 1000, "runaway program");
        }
    }

    #[test]
    fn nested_loops_repeat_their_bodies() {
        // A, 2 × (B, 3 × C), A
        let ops = [A, Op::Loop { count: 2, body: 3 }, B, Op::Loop { count: 3, body: 1 }, C, A];
        assert_eq!(trace(&ops, Cursor::new(&ops)), [A, B, C, C, C, B, C, C, C, A]);
    }

    #[test]
    fn loops_ending_together_close_together() {
        // 2 × (A, 2 × B): both bodies end at the program's end.
        let ops = [Op::Loop { count: 2, body: 3 }, A, Op::Loop { count: 2, body: 1 }, B];
        let mut c = Cursor::new(&ops);
        assert_eq!(trace(&ops, c.clone()), [A, B, B, A, B, B]);
        for _ in 0..6 {
            c.fetch(&ops);
            c.advance();
        }
        assert_eq!(c.fetch(&ops), Op::Exit);
        assert_eq!(c.depth(), 0);
    }

    #[test]
    fn empty_loop_is_skipped() {
        let ops = [A, Op::Loop { count: 5, body: 0 }, B];
        assert_eq!(trace(&ops, Cursor::new(&ops)), [A, B]);
    }

    #[test]
    fn past_the_end_is_exit_and_stays_exit() {
        let ops = [A];
        let mut c = Cursor::new(&ops);
        assert_eq!(c.fetch(&ops), A);
        c.advance();
        assert_eq!(c.fetch(&ops), Op::Exit);
        assert_eq!(c.fetch(&ops), Op::Exit);
        assert_eq!(Cursor::new(&[]).fetch(&[]), Op::Exit);
        // A loop whose body is the rest of the program exits after its last iteration.
        let ops = [Op::Loop { count: 2, body: 1 }, A];
        assert_eq!(trace(&ops, Cursor::new(&ops)), [A, A]);
    }

    #[test]
    fn fetch_without_advance_returns_the_same_op() {
        // A blocked Recv is fetched again after its wake-up, in the middle of a loop.
        let recv = Op::Recv { chan: 3 };
        let ops = [Op::Loop { count: 2, body: 2 }, recv, A];
        let mut c = Cursor::new(&ops);
        for _ in 0..2 {
            assert_eq!(c.fetch(&ops), recv);
            let pc = c.pc();
            assert_eq!(c.fetch(&ops), recv);
            assert_eq!((c.pc(), c.depth()), (pc, 1));
            c.advance();
            assert_eq!(c.fetch(&ops), A);
            c.advance();
        }
        assert_eq!(c.fetch(&ops), Op::Exit);
    }

    #[test]
    fn a_program_inside_a_concatenation_stops_at_its_end() {
        // Program 1 is ops[2..5] of the concatenation [prog 0 | prog 1 | prog 2].
        let ops = [C, C, Op::Loop { count: 2, body: 1 }, A, B, C];
        assert_eq!(trace(&ops, Cursor::at(2, 5)), [A, A, B]);
        assert_eq!(Cursor::at(2, 5).pc(), 2);
    }

    #[test]
    #[should_panic(expected = "loops nest deeper than 4")]
    fn nesting_past_the_limit_panics() {
        let mut ops: Vec<Op> = (0..5).map(|i| Op::Loop { count: 1, body: 5 - i }).collect();
        ops.push(A);
        Cursor::new(&ops).fetch(&ops);
    }
}
