//! loom model checks of the park/unpark protocol, the task state machine, the
//! runtime's channel and the fast scheduler's mailbox and watch slot.
//! Run with `crates/rt/loom.sh`.
#![cfg(loom)]

use loom::sync::atomic::{AtomicBool, AtomicUsize};
use loom::sync::Arc;
use loom::thread;
use schedlab_rt::park::{Idle, Mailbox, Parker};
use schedlab_rt::resched::Resched;
use schedlab_rt::task::{TaskState, WakeAction, HANDED, SCHEDULED, WATCHED};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};

/// A sleeper that parks with `park` until a flag is set, against a thread that sets
/// the flag and unparks it: loom reports a deadlock if the unpark can be lost.
fn no_lost_unpark(park: fn(&Parker)) {
    loom::model(move || {
        let p = Arc::new(Parker::new());
        let flag = Arc::new(AtomicBool::new(false));
        let (p2, f2) = (p.clone(), flag.clone());
        let t = thread::spawn(move || {
            f2.store(true, Release);
            p2.unpark();
        });
        while !flag.load(Acquire) {
            park(&p);
        }
        t.join().unwrap();
    });
}

/// An unpark before or during park is never lost.
#[test]
fn parker_no_lost_unpark() {
    no_lost_unpark(Parker::park);
}

/// The same parker used for two rounds: a stale token causes at most a spurious
/// return, never a hang.
#[test]
fn parker_two_rounds() {
    loom::model(|| {
        let p = Arc::new(Parker::new());
        let n = Arc::new(AtomicUsize::new(0));
        let (p2, n2) = (p.clone(), n.clone());
        let t = thread::spawn(move || {
            for _ in 0..2 {
                n2.fetch_add(1, Release);
                p2.unpark();
            }
        });
        while n.load(Acquire) < 2 {
            p.park();
        }
        t.join().unwrap();
    });
}

/// A worker asleep in the reactor's turn (`park_driving`: the driver is free, so it
/// takes it) is woken by an unpark that comes before, during or after it starts the
/// turn: the unpark sees `DRIVING` and wakes the driver, or leaves the token.
#[test]
fn parker_driving_no_lost_unpark() {
    no_lost_unpark(|p| p.park_driving(None, &mut || {}));
}

/// Two workers go to sleep at once: one drives the reactor, the other finds the driver
/// taken and parks on its condition variable. Each is woken by its own unpark, whichever
/// way it slept.
#[test]
fn two_parkers_one_driver() {
    loom::model(|| {
        let ps: Vec<_> = (0..2).map(|_| Arc::new(Parker::new())).collect();
        let flags: Vec<_> = (0..2).map(|_| Arc::new(AtomicBool::new(false))).collect();
        let sleepers: Vec<_> = (0..2)
            .map(|i| {
                let (p, f) = (ps[i].clone(), flags[i].clone());
                thread::spawn(move || {
                    while !f.load(Acquire) {
                        p.park_driving(None, &mut || {});
                    }
                })
            })
            .collect();
        for i in 0..2 {
            flags[i].store(true, Release);
            ps[i].unpark();
        }
        for s in sleepers {
            s.join().unwrap();
        }
    });
}

/// A fast worker's idle path, as `scheduler/fast/worker.rs` runs it: spin (one look
/// with `spin_look`), then register as a sleeper, look again with `take` and park if
/// that finds nothing; until a look finds the work.
fn spin_then_sleep(idle: &Idle, mut spin_look: impl FnMut() -> bool, mut take: impl FnMut() -> bool) {
    loop {
        idle.start_spinning(0);
        let found = spin_look();
        idle.stop_spinning(0);
        if found {
            return;
        }
        idle.register(0);
        if take() {
            idle.unregister(0);
            return;
        }
        idle.sleep(0);
    }
}

/// The worker's idle path against a producer: work published while the worker goes
/// from spinning to sleeping is always found (loom reports a deadlock otherwise).
fn idle_model(spin_first: bool) {
    loom::model(move || {
        let idle = Arc::new(Idle::new(1));
        let work = Arc::new(AtomicUsize::new(0)); // the "queue": number of items
        let (i2, w2) = (idle.clone(), work.clone());
        let producer = thread::spawn(move || {
            w2.fetch_add(1, SeqCst);
            i2.notify_one();
        });
        let take = |w: &AtomicUsize| w.compare_exchange(1, 0, SeqCst, SeqCst).is_ok();
        loop {
            if take(&work) {
                break;
            }
            if spin_first {
                idle.start_spinning(0);
                let found = take(&work);
                idle.stop_spinning(0);
                if found {
                    break;
                }
            }
            idle.register(0);
            if take(&work) {
                idle.unregister(0);
                break;
            }
            idle.sleep(0);
        }
        producer.join().unwrap();
    });
}

#[test]
fn idle_no_lost_wakeup() {
    idle_model(false);
}

#[test]
fn idle_no_lost_wakeup_with_spinning() {
    idle_model(true);
}

/// The fast worker's spinning rounds (`worker.rs`): each round only loads the queue
/// (no fence, it may see a stale empty queue) and searches for real only when the load
/// shows work; when its rounds run out it stops spinning, registers as a sleeper,
/// searches (the fenced take) and sleeps. A producer that saw it spinning does not wake
/// it, so the search after registering must find what the loads missed (loom reports a
/// deadlock otherwise).
#[test]
fn idle_no_lost_wakeup_when_spinning_rounds_only_load() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(1));
        let work = Arc::new(AtomicUsize::new(0));
        let (i2, w2) = (idle.clone(), work.clone());
        let producer = thread::spawn(move || {
            w2.fetch_add(1, SeqCst);
            i2.notify_one();
        });
        let take = |w: &AtomicUsize| w.compare_exchange(1, 0, SeqCst, SeqCst).is_ok();
        loop {
            idle.start_spinning(0);
            let mut found = false;
            for _ in 0..2 {
                if work.load(Relaxed) > 0 && take(&work) {
                    found = true;
                    break;
                }
                loom::hint::spin_loop();
            }
            idle.stop_spinning(0);
            if found {
                break;
            }
            idle.register(0);
            if take(&work) {
                idle.unregister(0);
                break;
            }
            idle.sleep(0);
        }
        producer.join().unwrap();
    });
}

/// The fast scheduler's mailbox (`scheduler/fast/mailbox.rs`): two producers offer a
/// task each, falling back to the home queue (a bit each here) when the slot is taken,
/// while the worker takes once; then the rest is collected. Every task is handed over
/// exactly once, and loom checks the slot's accesses for data races.
#[test]
fn mailbox_hands_over_each_task_once() {
    loom::model(|| {
        let mb = Arc::new(Mailbox::<usize>::new());
        let home = Arc::new(AtomicUsize::new(0)); // bit k: task k went to the home queue
        let producers: Vec<_> = (0..2)
            .map(|k| {
                let (mb, home) = (mb.clone(), home.clone());
                thread::spawn(move || {
                    if let Err(t) = mb.offer(k) {
                        home.fetch_or(1 << t, SeqCst);
                    }
                })
            })
            .collect();
        let mut seen = 0usize;
        let mut take = |mb: &Mailbox<usize>| {
            // SAFETY: this thread is the only taker.
            if let Some(t) = unsafe { mb.take() } {
                assert_eq!(seen & (1 << t), 0, "task {t} taken twice");
                seen |= 1 << t;
            }
        };
        take(&mb);
        for p in producers {
            p.join().unwrap();
        }
        take(&mb);
        let h = home.load(SeqCst);
        assert_eq!(seen & h, 0, "a task both in the mailbox and in the home queue");
        assert_eq!(seen | h, 0b11, "a task lost");
    });
}

/// A task handed over through the mailbox while its worker goes from spinning (loads
/// of the slot only) to sleeping: the producer wakes the worker only if it is
/// registered as a sleeper (`Idle::wake_worker`), so the worker's take after
/// registering must find what its loads missed (loom reports a deadlock otherwise).
#[test]
fn mailbox_wake_not_lost_by_a_worker_going_to_sleep() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(1));
        let mb = Arc::new(Mailbox::<usize>::new());
        let (i2, m2) = (idle.clone(), mb.clone());
        let producer = thread::spawn(move || {
            m2.offer(7).expect("the only producer finds the slot empty");
            i2.wake_worker(0);
        });
        // SAFETY (both takes): this thread is the only taker.
        let take = || unsafe { mb.take() }.is_some();
        spin_then_sleep(&idle, || mb.is_full() && take(), take);
        producer.join().unwrap();
    });
}

/// A watched task (`scheduler/fast/worker.rs`, the watch slot) woken by value from
/// another thread while its worker goes from spinning (loads of the task's state) to
/// sleeping. A wake of a watched task hands it over and wakes nobody; the worker gives
/// its watched task up (`WATCHED → IDLE`) after registering as a sleeper, so a wake
/// either finds it watched and the worker sees that in its own swap, or finds it idle
/// and queues it (here: a flag) and wakes the worker as any producer does. Nothing is
/// lost (loom reports a deadlock otherwise), and the poll sees the published message.
#[test]
fn watched_wake_not_lost_by_a_worker_going_to_sleep() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(1));
        let st = Arc::new(TaskState::new(WATCHED));
        let queued = Arc::new(AtomicBool::new(false));
        let msg = Arc::new(AtomicUsize::new(0));
        let (i2, s2, q2, m2) = (idle.clone(), st.clone(), queued.clone(), msg.clone());
        let waker = thread::spawn(move || {
            m2.store(7, Relaxed);
            match s2.wake_handing() {
                WakeAction::Handed => {}
                WakeAction::Schedule => {
                    q2.store(true, Release);
                    i2.wake_worker(0);
                }
                other => panic!("{other:?} for a watched or idle task"),
            }
        });
        let watching = std::cell::Cell::new(true);
        let woken = || watching.get() && st.load() != WATCHED;
        let give_up = || {
            if watching.get() {
                watching.set(false);
                if st.unwatch().is_some() {
                    watching.set(true); // woken first: the worker runs it
                }
            }
            woken() || queued.load(Acquire)
        };
        spin_then_sleep(&idle, || woken() || queued.load(Acquire), || woken() || give_up());
        match queued.load(Acquire) {
            true => assert_eq!(st.load(), SCHEDULED, "queued, and scheduled"),
            false => assert_eq!(st.load(), HANDED, "the worker sees the reference handed over"),
        }
        assert!(st.start_poll(), "the worker owns the scheduled task");
        assert_eq!(msg.load(Relaxed), 7, "the poll sees what the waker published");
        waker.join().unwrap();
    });
}

/// The worker gives up its watched task (`WATCHED → IDLE`) while a waker wakes it:
/// exactly one side ends up owning the scheduled task (the waker queues it, or the
/// worker finds it scheduled), never both, never neither.
///
/// With a wake by value (`wake_handing`), the waker's reference goes along only when
/// the worker owns the task (`HANDED`), and the worker learns it from the state it
/// finds.
#[test]
fn unwatch_racing_a_wake_schedules_once() {
    for handing in [false, true] {
        loom::model(move || {
            let st = Arc::new(TaskState::new(WATCHED));
            let s2 = st.clone();
            let waker = thread::spawn(move || if handing { s2.wake_handing() } else { s2.wake() });
            let found = st.unwatch();
            let worker_owns = matches!(found, Some(SCHEDULED | HANDED));
            let (waker_queues, handed) = match waker.join().unwrap() {
                WakeAction::Schedule => (true, false),
                WakeAction::Watched => (false, false),
                WakeAction::Handed => (false, true),
                WakeAction::Nothing => panic!("a wake of an idle task did nothing"),
            };
            assert!(worker_owns != waker_queues, "owned by both or by neither");
            assert_eq!(handed, found == Some(HANDED), "a handed reference the worker does not see");
            assert!(!handed || handing, "handed by a wake that may not hand");
            assert!(st.start_poll());
        });
    }
}

/// A policy worker against a waker (`resched.rs`) that twice queues a task under the
/// run-queue lock and asks for a reschedule, which wakes the worker only if its flag
/// was clear; the worker clears the flag, then takes the queue under the lock, and
/// sleeps only when it finds the flag clear. The second request may find the flag
/// still set and send no IPI: it is never lost (loom reports a deadlock otherwise).
#[test]
fn resched_skipping_the_ipi_to_a_flagged_worker_loses_no_wakeup() {
    loom::model(|| {
        let r = Arc::new(Resched::new());
        let queue = Arc::new(loom::sync::Mutex::new(0usize));
        let (r2, q2) = (r.clone(), queue.clone());
        let waker = thread::spawn(move || {
            let mut sent = 0;
            for _ in 0..2 {
                let mut q = q2.lock().unwrap();
                *q += 1;
                sent += usize::from(r2.request());
                drop(q);
            }
            sent
        });
        let mut taken = 0;
        loop {
            r.clear();
            taken += std::mem::take(&mut *queue.lock().unwrap());
            if taken == 2 {
                break;
            }
            r.sleep_unless_requested(None);
        }
        let sent = waker.join().unwrap();
        assert!((1..=2).contains(&sent), "{sent} IPIs for two requests");
    });
}

/// A wake racing with a poll re-schedules the task exactly once, and only if the
/// poll may have missed the event: as a plain task (the waker queues it, or the
/// worker re-queues it) and as a task its worker goes on watching
/// (`finish_pending_watched`: woken in the watch slot, which no waker queues, or
/// re-queued by the worker).
#[test]
fn task_wake_during_poll_reschedules_once() {
    for watched in [false, true] {
        loom::model(move || {
            let st = Arc::new(TaskState::new(SCHEDULED));
            let event = Arc::new(AtomicBool::new(false));
            let (s2, e2) = (st.clone(), event.clone());
            let waker = thread::spawn(move || {
                e2.store(true, Release);
                s2.wake()
            });
            assert!(st.start_poll());
            let saw_event = event.load(Acquire); // the "poll"
            let requeue = if watched { st.finish_pending_watched() } else { st.finish_pending() };
            let action = waker.join().unwrap();
            let woke = match action {
                WakeAction::Schedule => !watched,
                WakeAction::Watched => watched,
                WakeAction::Nothing => false,
                WakeAction::Handed => panic!("handed by a wake that may not hand"),
            };
            assert!(woke || action == WakeAction::Nothing, "{action:?} for a task watched: {watched}");
            assert!(!(woke && requeue), "scheduled twice");
            if !saw_event {
                assert!(woke || requeue, "lost wake-up");
            }
            assert_eq!(st.load() == SCHEDULED, woke || requeue);
        });
    }
}

/// Two wakers and a poll: at most one of them schedules the task.
#[test]
fn task_two_wakers_schedule_at_most_once() {
    loom::model(|| {
        let st = Arc::new(TaskState::new(SCHEDULED));
        assert!(st.start_poll());
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let s = st.clone();
                thread::spawn(move || s.wake() == WakeAction::Schedule)
            })
            .collect();
        let requeue = st.finish_pending();
        let woke = hs.into_iter().map(|h| h.join().unwrap()).filter(|&w| w).count();
        assert!(woke + requeue as usize <= 1, "scheduled {} times", woke + requeue as usize);
        assert!(woke + requeue as usize == 1, "both wakes lost");
    });
}

/// The runtime's channel: a sender on another thread sends twice and drops (closing
/// the channel) while the receiver waits with a real waker. Both messages arrive in
/// order and the close wakes the receiver: no lost wake-up in any interleaving.
#[test]
fn channel_delivers_everything_and_wakes_on_close() {
    loom::model(|| {
        let (tx, mut rx) = schedlab_rt::channel::unbounded::<u32>();
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        let mut got = Vec::new();
        loom::future::block_on(async {
            while let Some(x) = rx.recv().await {
                got.push(x);
            }
        });
        assert_eq!(got, [1, 2]);
        t.join().unwrap();
    });
}

/// Two producers (one cloned sender each): the last drop closes, whichever it is.
#[test]
fn channel_two_senders_close_once_both_are_gone() {
    loom::model(|| {
        let (tx, mut rx) = schedlab_rt::channel::unbounded::<u32>();
        let tx2 = tx.clone();
        let t = thread::spawn(move || tx2.send(2).unwrap());
        tx.send(1).unwrap();
        drop(tx);
        let mut got = Vec::new();
        loom::future::block_on(async {
            while let Some(x) = rx.recv().await {
                got.push(x);
            }
        });
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
        t.join().unwrap();
    });
}

/// The receiver's lock-free wait (`events` unchanged and its waker still registered):
/// it first waits with one waker (`Waker::noop`, registered under the lock), then
/// with another (`block_on`'s), while a sender sends once. The second waker differs,
/// so the receiver must not trust the first registration: it takes the lock and
/// registers the new one, and the message arrives in every interleaving.
#[test]
fn channel_lock_free_wait_never_trusts_another_wakers_registration() {
    loom::model(|| {
        let (tx, mut rx) = schedlab_rt::channel::unbounded::<u32>();
        let t = thread::spawn(move || {
            tx.send(7).unwrap();
            // Keep the channel open: only the message may end the wait.
            tx
        });
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let first = rx.poll_recv(&mut cx);
        let got = match first {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => loom::future::block_on(rx.recv()),
        };
        assert_eq!(got, Some(7));
        drop(t.join().unwrap());
    });
}
