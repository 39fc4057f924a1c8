//! An intrusive doubly-linked run list (Linux's `list_head runqueue_head` with each
//! task's `run_list`). O(1) insert at either end and O(1) removal; the links live in
//! the [`TaskTable`] and are guarded by the lock that guards the list.
//!
//! Each operation touches the task lines the kernel's `list_add` / `list_add_tail` /
//! `list_del` store into or load from. Which line holds a task's `prev` link depends on
//! the kernel's `struct task_struct` ([`PrevLink`]): the `next` link is on the hot line
//! in every layout modelled, the `prev` link is not in 2.4's.

use crate::platform::{Access, Line, Platform};
use crate::task::{TaskId, TaskSched, TaskTable, NIL};
use std::sync::atomic::Ordering::Relaxed;

/// Where a task's `run_list.prev` lies in the kernel's `struct task_struct`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevLink {
    /// On the hot line, with `next`: the O(1) scheduler's `task_t` (2.5 and the 2.4
    /// patches), whose block from offset 32 is `cpu`, `prio`, a nice or static
    /// priority, `run_list` (offsets 44 to 51) and `array`, inside one 32-byte line.
    HotLine,
    /// On the line after the hot line ([`Line::TaskLink`]): 2.4's `struct task_struct`,
    /// whose 32-byte block from offset 32 ends with `run_list.next` at offset 60, so
    /// that `prev` is at offset 64 ("only the 'next' pointer fits into the cacheline,
    /// but that's just fine", `include/linux/sched.h`, 2.4.0 to 2.4.17).
    OwnLine,
}

#[derive(Debug)]
pub struct RunList {
    /// This list's queue index, recorded in each member's `on_rq`.
    queue: usize,
    head: TaskId,
    tail: TaskId,
    len: usize,
    prev_link: PrevLink,
}

impl RunList {
    pub fn new(queue: usize, prev_link: PrevLink) -> RunList {
        RunList { queue, head: NIL, tail: NIL, len: 0, prev_link }
    }

    /// Whether the `prev` links are on lines apart from the hot lines, in the layout
    /// of the kernel and in the memory the platform prices.
    #[inline]
    fn prev_apart<P: Platform>(&self, p: &P) -> bool {
        self.prev_link == PrevLink::OwnLine && p.prev_link_apart()
    }

    /// A store into (or load of) `id`'s `prev` link, when that link is not on the hot
    /// line. On the hot line nothing is charged here: the list's callers touch the
    /// task's hot line themselves, and a neighbour's store goes through [`Self::touch_prev`].
    #[inline]
    fn touch_own_prev<P: Platform>(&self, p: &P, id: TaskId, access: Access) {
        if self.prev_apart(p) {
            p.touch(Line::TaskLink(id), access);
        }
    }

    /// A store into neighbour `id`'s `prev` link: its hot line or its link line.
    #[inline]
    fn touch_prev<P: Platform>(&self, p: &P, id: TaskId) {
        let line = if self.prev_apart(p) { Line::TaskLink(id) } else { Line::Task(id) };
        p.touch(line, Access::Write);
    }
    pub fn queue(&self) -> usize {
        self.queue
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn first(&self) -> Option<TaskId> {
        (self.head != NIL).then_some(self.head)
    }
    pub fn last(&self) -> Option<TaskId> {
        (self.tail != NIL).then_some(self.tail)
    }
    /// The member before `id`, in list order.
    #[inline]
    pub fn prev(&self, tasks: &TaskTable, id: TaskId) -> Option<TaskId> {
        let p = tasks.get(id).prev.load(Relaxed);
        (p != NIL).then_some(p)
    }
    /// The member after `id`, in list order.
    #[inline]
    pub fn next(&self, tasks: &TaskTable, id: TaskId) -> Option<TaskId> {
        let n = tasks.get(id).next.load(Relaxed);
        (n != NIL).then_some(n)
    }
    /// [`next`](RunList::next) of the task whose state is `ts`: a walk that has already
    /// looked the task up reads its link from there, one table lookup per visit instead
    /// of two (the compiler cannot merge them across the platform calls in between).
    #[inline]
    pub fn next_of(&self, ts: &TaskSched) -> Option<TaskId> {
        let n = ts.next.load(Relaxed);
        (n != NIL).then_some(n)
    }
    pub fn contains(&self, tasks: &TaskTable, id: TaskId) -> bool {
        tasks.get(id).on_rq() == Some(self.queue)
    }

    /// `list_add`: insert at the front (where 2.4 puts new and woken tasks).
    /// Links `id` first. Stores into `id`'s two links and the old first task's `prev`
    /// link: those lines are touched (`list_add` stores into the neighbour's
    /// `run_list`, not only into `id`'s; `id`'s hot line is the caller's).
    pub fn push_front<P: Platform>(&mut self, p: &P, tasks: &TaskTable, id: TaskId) {
        let t = tasks.get(id);
        debug_assert!(t.on_rq().is_none(), "task {id} is already on queue {:?}", t.on_rq());
        self.touch_own_prev(p, id, Access::Write);
        t.prev.store(NIL, Relaxed);
        t.next.store(self.head, Relaxed);
        if self.head != NIL {
            self.touch_prev(p, self.head);
            tasks.get(self.head).prev.store(id, Relaxed);
        } else {
            self.tail = id;
        }
        self.head = id;
        self.len += 1;
        t.set_on_rq(Some(self.queue));
    }

    /// `list_add_tail`.
    /// Links `id` last, writing `id`'s `prev` link and the old last task's `next` link
    /// (on its hot line): their lines are touched.
    pub fn push_back<P: Platform>(&mut self, p: &P, tasks: &TaskTable, id: TaskId) {
        let t = tasks.get(id);
        debug_assert!(t.on_rq().is_none(), "task {id} is already on queue {:?}", t.on_rq());
        self.touch_own_prev(p, id, Access::Write);
        t.next.store(NIL, Relaxed);
        t.prev.store(self.tail, Relaxed);
        if self.tail != NIL {
            p.touch(Line::Task(self.tail), Access::Write);
            tasks.get(self.tail).next.store(id, Relaxed);
        } else {
            self.head = id;
        }
        self.tail = id;
        self.len += 1;
        t.set_on_rq(Some(self.queue));
    }

    /// `list_del`. The task must be on this list.
    /// Unlinks `id`: loads its `prev` link and writes its neighbours' links, the
    /// predecessor's `next` (hot line) and the successor's `prev`: those lines are
    /// touched.
    pub fn remove<P: Platform>(&mut self, pl: &P, tasks: &TaskTable, id: TaskId) {
        let t = tasks.get(id);
        debug_assert_eq!(t.on_rq(), Some(self.queue), "task {id} is not on queue {}", self.queue);
        self.touch_own_prev(pl, id, Access::Read);
        let (prev, n) = (t.prev.load(Relaxed), t.next.load(Relaxed));
        if prev != NIL {
            pl.touch(Line::Task(prev), Access::Write);
            tasks.get(prev).next.store(n, Relaxed);
        } else {
            self.head = n;
        }
        if n != NIL {
            self.touch_prev(pl, n);
            tasks.get(n).prev.store(prev, Relaxed);
        } else {
            self.tail = prev;
        }
        self.len -= 1;
        t.set_on_rq(None);
    }

    /// `move_last_runqueue`.
    pub fn move_to_back<P: Platform>(&mut self, p: &P, tasks: &TaskTable, id: TaskId) {
        self.remove(p, tasks, id);
        self.push_back(p, tasks, id);
    }

    /// Members in list order (collects nothing; walks the links).
    pub fn iter<'a>(&'a self, tasks: &'a TaskTable) -> impl Iterator<Item = TaskId> + 'a {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let id = cur;
            cur = tasks.get(id).next.load(Relaxed);
            Some(id)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::NullPlatform;
    use crate::task::TaskParams;

    #[test]
    fn front_back_remove_keep_order_and_membership() {
        let tasks = TaskTable::new(8);
        for i in 0..5 {
            tasks.init(i, &TaskParams::default(), 0, 0);
        }
        let p = NullPlatform::new(0);
        let mut l = RunList::new(3, PrevLink::OwnLine);
        l.push_back(&p, &tasks, 0);
        l.push_back(&p, &tasks, 1);
        l.push_front(&p, &tasks, 2);
        assert_eq!(l.iter(&tasks).collect::<Vec<_>>(), vec![2, 0, 1]);
        l.remove(&p, &tasks, 0);
        assert_eq!(l.iter(&tasks).collect::<Vec<_>>(), vec![2, 1]);
        assert_eq!(tasks.get(0).on_rq(), None);
        assert_eq!(tasks.get(2).on_rq(), Some(3));
        l.move_to_back(&p, &tasks, 2);
        assert_eq!(l.iter(&tasks).collect::<Vec<_>>(), vec![1, 2]);
        l.remove(&p, &tasks, 1);
        l.remove(&p, &tasks, 2);
        assert!(l.is_empty());
        assert_eq!(l.first(), None);
    }
}
