//! The Converse runtime end to end: ping-pong, the scheduler-queue path,
//! scheduler entry points and their return values, exits, a million-message
//! all-to-all stress run, and handler panics.

use schedlab_converse::{
    bench_pingpong, bench_queueing_overhead, Converse, HandlerId, Msg, Pe, Prio, RunError, Strategy,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The machine has 2 CPUs and PEs spin when idle: run one multi-PE test at a
/// time so tests don't steal each other's CPUs.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn msg_u64(h: HandlerId, a: u64, b: u64) -> Msg {
    let mut m = Msg::with_payload_len(h, 16);
    m.write_u64(0, a);
    m.write_u64(8, b);
    m
}

#[test]
fn pingpong_between_pe0_and_pe1_counts_round_trips() {
    let _g = serial();
    const N: u64 = 20_000;
    let counts = Converse::run(2, |pe: &mut Pe| {
        let count = Rc::new(Cell::new(0u64));
        let c = count.clone();
        let ping = pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
            c.set(c.get() + 1);
            let trip = m.read_u64(0);
            assert_eq!(m.src_pe(), Some(1 - pe.my_pe()));
            if pe.my_pe() == 0 {
                if trip + 1 == N {
                    pe.exit_all();
                    return;
                }
                m.write_u64(0, trip + 1);
                pe.send(1, m);
            } else {
                pe.send(0, m);
            }
        });
        if pe.my_pe() == 0 {
            pe.send(1, msg_u64(ping, 0, 0));
        }
        pe.schedule_forever();
        count.get()
    })
    .unwrap();
    assert_eq!(counts, vec![N, N]);
}

#[test]
fn pingpong_with_shared_handlers_registered_before_start() {
    let _g = serial();
    let trips = Arc::new(AtomicU64::new(0));
    let mut conv = Converse::builder().pes(2).pin(false).build();
    let t = trips.clone();
    let ping = conv.register_handler(move |pe: &mut Pe, m: Msg| {
        let n = t.fetch_add(1, Ordering::Relaxed) + 1;
        if n == 2_000 {
            pe.exit_all();
        } else {
            pe.send(1 - pe.my_pe(), m);
        }
    });
    assert_eq!(ping, HandlerId(0));
    let res = conv
        .start(|pe: &mut Pe| {
            if pe.my_pe() == 0 {
                pe.send(1, Msg::with_payload_len(ping, 8));
            }
            // returning without scheduling: start() schedules until exit
            pe.my_pe() * 10
        })
        .unwrap();
    assert_eq!(res, vec![0, 10]);
    assert_eq!(trips.load(Ordering::Relaxed), 2_000);
}

fn strategy_of(kind: u64, prio: i64) -> Strategy {
    match kind {
        0 => Strategy::Fifo,
        1 => Strategy::Lifo,
        2 => Strategy::IFifo(prio as i32),
        3 => Strategy::ILifo(prio as i32),
        4 => Strategy::LFifo(prio),
        5 => Strategy::LLifo(prio),
        6 => Strategy::BFifo(Prio::bits(2, &[(prio as u32) << 30])),
        _ => Strategy::BLifo(Prio::bits(2, &[(prio as u32) << 30])),
    }
}

#[test]
fn scheduler_queue_path_dispatches_in_strategy_order() {
    let _g = serial();
    // (id, kind, prio): all arrive over the network first, each arrival
    // handler enqueues its message, then the scheduler dispatches them.
    let plan: Vec<(u64, u64, i64)> = vec![
        (0, 0, 0),        // FIFO
        (1, 2, 5),        // IFIFO 5
        (2, 2, -5),       // IFIFO -5
        (3, 1, 0),        // LIFO
        (4, 3, 5),        // ILIFO 5 (before id 1)
        (5, 2, 0),        // IFIFO 0 (positive heap: after FIFO/LIFO)
        (6, 4, -7),       // LFIFO -7
        (7, 6, 1),        // BFIFO "01" = 1/4 (negative heap, below every int ≥ -2^30)
        (8, 7, 3),        // BLIFO "11" = 3/4 (positive heap, after all ints ≥ 0 < 2^30)
        (9, 0, 0),        // FIFO
        (10, 5, 1 << 40), // LLIFO 2^40
        (11, 2, -1),      // IFIFO -1
    ];
    let order = Converse::run(1, move |pe: &mut Pe| {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let s = seen.clone();
        let real = HandlerId(1);
        let arrive = pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
            let (kind, prio) = (m.read_u64(8), m.read_u64(16) as i64);
            m.set_handler(real);
            pe.enqueue(m, strategy_of(kind, prio));
        });
        let r = pe.register_handler(move |pe: &mut Pe, m: Msg| {
            s.borrow_mut().push(m.read_u64(0));
            if s.borrow().len() == 12 {
                pe.exit_scheduler();
            }
        });
        assert_eq!(r, real);
        for &(id, kind, prio) in &plan {
            let mut m = Msg::with_payload_len(arrive, 24);
            m.write_u64(0, id);
            m.write_u64(8, kind);
            m.write_u64(16, prio as u64);
            pe.send(0, m);
        }
        pe.schedule_forever();
        assert_eq!(pe.queue_len(), 0);
        let st = pe.stats();
        // Sent to itself: through the local queue, not the network.
        assert_eq!((st.from_network, st.from_local, st.from_queue, st.enqueued), (0, 12, 12, 12));
        pe.exit_all();
        let v = seen.borrow().clone();
        v
    })
    .unwrap();
    // negative heap: 1/4 (7), int -5 (2), int -1 (11), long -7 (6) — as
    // fractions, long -7 = 1/2 - 7/2^64 lies above int -1 = 1/2 - 1/2^32
    // zero deque: LIFO 3, FIFO 0, FIFO 9
    // positive heap: int 0 (5), ILIFO 5 (4), IFIFO 5 (1), long 2^40 (10), 3/4 (8)
    assert_eq!(order[0], vec![7, 2, 11, 6, 3, 0, 9, 5, 4, 1, 10, 8]);
}

/// A handler that counts the messages it gets and calls `exit_scheduler` on one
/// whose first word is 1; returns the count and the handler.
fn counting_stopper(pe: &mut Pe) -> (Rc<Cell<u64>>, HandlerId) {
    let delivered = Rc::new(Cell::new(0u64));
    let d = delivered.clone();
    let h = pe.register_handler(move |pe: &mut Pe, m: Msg| {
        d.set(d.get() + 1);
        if m.read_u64(0) == 1 {
            pe.exit_scheduler();
        }
    });
    (delivered, h)
}

#[test]
fn schedule_count_returns_zero_or_the_undelivered_rest() {
    let _g = serial();
    Converse::run(1, |pe: &mut Pe| {
        let (delivered, h) = counting_stopper(pe);
        let flag = |stop: bool| msg_u64(h, stop as u64, 0);
        for stop in [false, false, false, true, false, false] {
            pe.send(0, flag(stop));
        }
        assert_eq!(pe.schedule_count(3), 0);
        assert_eq!(delivered.get(), 3);
        // the 4th message stops the scheduler: 1 of 10 delivered
        assert_eq!(pe.schedule_count(10), 9);
        assert_eq!(delivered.get(), 4);
        // CsdScheduler(n) dispatch: n > 0 counts
        assert_eq!(pe.scheduler(1), 0);
        assert_eq!(delivered.get(), 5);
        // n == 0 polls: delivers the last one and returns, not waiting
        assert_eq!(pe.scheduler(0), 0);
        assert_eq!(delivered.get(), 6);
        // a message through the queue counts twice (arrival + dispatch)
        let real = h;
        let via_queue = pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
            m.set_handler(real);
            pe.enqueue_fifo(m);
        });
        pe.send(0, msg_u64(via_queue, 0, 0));
        assert_eq!(pe.schedule_count(2), 0);
        assert_eq!(delivered.get(), 7);
        // a global exit stops a counting scheduler early
        pe.send(0, flag(false));
        pe.exit_all();
        assert_eq!(pe.schedule_count(5), 4);
        assert!(pe.exiting());
        assert_eq!(pe.schedule_count(5), 5, "after a global exit nothing runs");
        assert_eq!(pe.stats().delivered, 9);
    })
    .unwrap();
}

#[test]
fn exit_scheduler_semantics() {
    let _g = serial();
    Converse::run(1, |pe: &mut Pe| {
        let log = Rc::new(RefCell::new(Vec::new()));
        let l = log.clone();
        let h = pe.register_handler(move |pe: &mut Pe, m: Msg| {
            let v = m.read_u64(0);
            l.borrow_mut().push(v);
            match v {
                // nested scheduler inside a handler: exit ends both levels
                100 => {
                    pe.schedule_forever();
                    l.borrow_mut().push(101);
                }
                200 => pe.exit_scheduler(),
                _ => {}
            }
        });
        // An exit before a scheduler starts does not stop it.
        pe.exit_scheduler();
        pe.send(0, msg_u64(h, 1, 0));
        pe.send(0, msg_u64(h, 2, 0));
        assert_eq!(pe.schedule_count(2), 0);
        // schedule_forever returns after the handler that called exit
        pe.send(0, msg_u64(h, 200, 0));
        pe.send(0, msg_u64(h, 3, 0));
        pe.schedule_forever();
        assert_eq!(*log.borrow(), vec![1, 2, 200]);
        // nested: the inner scheduler handles 200, both return; 4 stays
        pe.send(0, msg_u64(h, 100, 0));
        pe.send(0, msg_u64(h, 200, 0));
        pe.send(0, msg_u64(h, 4, 0));
        pe.schedule_forever(); // first delivers the pending 3
        assert_eq!(*log.borrow(), vec![1, 2, 200, 3, 100, 200, 101]);
        pe.schedule_poll();
        assert_eq!(*log.borrow(), vec![1, 2, 200, 3, 100, 200, 101, 4]);
        pe.exit_all();
    })
    .unwrap();
}

#[test]
fn exit_all_reaches_every_pe_after_earlier_messages() {
    let _g = serial();
    const K: u64 = 1000;
    let got = Converse::builder()
        .pes(3)
        .pin(true)
        .spin(Duration::from_micros(20))
        .build()
        .start(|pe: &mut Pe| {
            let n = Rc::new(Cell::new(0u64));
            let c = n.clone();
            let h = pe.register_handler(move |_pe: &mut Pe, _m: Msg| c.set(c.get() + 1));
            if pe.my_pe() == 0 {
                for i in 0..K {
                    pe.broadcast_all(msg_u64(h, i, 0));
                }
                pe.exit_all();
            }
            pe.schedule_forever();
            assert!(pe.exiting());
            n.get()
        })
        .unwrap();
    assert_eq!(got, vec![K, K, K]);
}

#[test]
fn broadcast_skips_the_sender() {
    let _g = serial();
    let got = Converse::builder()
        .pes(3)
        .spin(Duration::from_micros(20))
        .build()
        .start(|pe: &mut Pe| {
            let n = Rc::new(Cell::new(0u64));
            let c = n.clone();
            let h = pe.register_handler(move |_pe: &mut Pe, _m: Msg| c.set(c.get() + 1));
            let done = Rc::new(Cell::new(0));
            let d = done.clone();
            let fin = pe.register_handler(move |pe: &mut Pe, _m: Msg| {
                d.set(d.get() + 1);
                if d.get() == pe.num_pes() {
                    pe.exit_all();
                }
            });
            for _ in 0..=pe.my_pe() {
                pe.broadcast(msg_u64(h, 0, 0));
            }
            pe.send(0, Msg::with_payload_len(fin, 0));
            pe.schedule_forever();
            n.get()
        })
        .unwrap();
    // PE p receives one broadcast per copy sent by each other PE q: q + 1.
    assert_eq!(got, vec![2 + 3, 1 + 3, 1 + 2]);
}

#[test]
fn deliver_msgs_ignores_the_scheduler_queue() {
    let _g = serial();
    Converse::run(1, |pe: &mut Pe| {
        let log = Rc::new(RefCell::new(Vec::new()));
        let l = log.clone();
        let h = pe.register_handler(move |_pe: &mut Pe, m: Msg| l.borrow_mut().push(m.read_u64(0)));
        pe.enqueue_fifo(msg_u64(h, 100, 0));
        for i in 0..3 {
            pe.send(0, msg_u64(h, i, 0));
        }
        assert_eq!(pe.deliver_msgs(2), 0);
        assert_eq!(*log.borrow(), vec![0, 1]);
        assert_eq!(pe.deliver_msgs(-1), -1);
        assert_eq!(pe.deliver_msgs(5), 5, "network empty: nothing delivered");
        assert_eq!(*log.borrow(), vec![0, 1, 2]);
        assert_eq!(pe.queue_len(), 1);
        pe.schedule_poll();
        assert_eq!(*log.borrow(), vec![0, 1, 2, 100]);
        pe.exit_all();
    })
    .unwrap();
}

#[test]
fn deliver_specific_msg_sets_others_aside_in_order() {
    let _g = serial();
    Converse::run(2, |pe: &mut Pe| {
        let log = Rc::new(RefCell::new(Vec::new()));
        let (l1, l2) = (log.clone(), log.clone());
        let a = pe.register_handler(move |_pe: &mut Pe, m: Msg| l1.borrow_mut().push(m.read_u64(0)));
        let b = pe.register_handler(move |_pe: &mut Pe, m: Msg| l2.borrow_mut().push(1000 + m.read_u64(0)));
        if pe.my_pe() == 1 {
            for i in 0..3 {
                pe.send(0, msg_u64(a, i, 0));
            }
            pe.send(0, msg_u64(b, 7, 0));
            return Vec::new();
        }
        assert!(pe.deliver_specific_msg(b));
        assert_eq!(*log.borrow(), vec![1007]);
        // the set-aside ones (now in the local queue) in arrival order
        assert_eq!(pe.schedule_count(3), 0);
        assert_eq!(pe.stats().from_local, 3);
        pe.exit_all();
        let v = log.borrow().clone();
        v
    })
    .map(|r| assert_eq!(r[0], vec![1007, 0, 1, 2]))
    .unwrap();
}

#[test]
fn all_to_all_million_messages_no_loss_no_duplicate() {
    let _g = serial();
    const PES: usize = 2;
    const PER_PAIR: u64 = 1 << 18; // 262,144 per (src, dst): 1,048,576 total
    const BATCH: u64 = 512;
    let t = Instant::now();
    let report = Converse::builder().pes(PES).pin(true).build().start_report(|pe: &mut Pe| {
        let n = pe.num_pes();
        // seen[src][seq] and the next expected seq per source
        let seen = Rc::new(RefCell::new(vec![vec![false; PER_PAIR as usize]; n]));
        let next = Rc::new(RefCell::new(vec![0u64; n]));
        let bad = Rc::new(Cell::new(0u64));
        let received = Rc::new(Cell::new(0u64));
        let (recv_h, gen_h, done_h) = (HandlerId(0), HandlerId(1), HandlerId(2));
        let (s, nx, b, r) = (seen.clone(), next.clone(), bad.clone(), received.clone());
        pe.register_handler(move |pe: &mut Pe, m: Msg| {
            let (src, seq) = (m.read_u64(0) as usize, m.read_u64(8));
            let mut seen = s.borrow_mut();
            if std::mem::replace(&mut seen[src][seq as usize], true) {
                b.set(b.get() + 1); // duplicate
            }
            let mut nx = nx.borrow_mut();
            if nx[src] != seq {
                b.set(b.get() + 1); // out of order
            }
            nx[src] = seq + 1;
            r.set(r.get() + 1);
            if r.get() == PER_PAIR * pe.num_pes() as u64 {
                pe.send(0, Msg::with_payload_len(done_h, 0));
            }
        });
        // generator: one batch to every PE, then continue via a self-send
        pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
            let from = m.read_u64(0);
            let to = (from + BATCH).min(PER_PAIR);
            let me = pe.my_pe() as u64;
            for seq in from..to {
                for dst in 0..pe.num_pes() {
                    pe.send(dst, msg_u64(recv_h, me, seq));
                }
            }
            if to < PER_PAIR {
                m.write_u64(0, to);
                pe.send(pe.my_pe(), m);
            }
        });
        let done = Rc::new(Cell::new(0usize));
        let d = done.clone();
        pe.register_handler(move |pe: &mut Pe, _m: Msg| {
            d.set(d.get() + 1);
            if d.get() == pe.num_pes() {
                pe.exit_all();
            }
        });
        pe.send(pe.my_pe(), msg_u64(gen_h, 0, 0));
        pe.schedule_forever();
        let all_seen = seen.borrow().iter().flatten().all(|&x| x);
        (received.get(), bad.get(), all_seen)
    });
    let elapsed = t.elapsed();
    assert!(report.handler_errors.is_empty());
    let total: u64 = report.stats.iter().map(|s| s.delivered).sum();
    for r in report.results {
        assert_eq!(r, Some((PER_PAIR * PES as u64, 0, true)));
    }
    // every data message, plus generator continuations and done messages
    assert!(total >= PER_PAIR * (PES * PES) as u64);
    eprintln!(
        "all-to-all: {} messages in {elapsed:?} ({:.1} M msg/s); parks {:?}",
        PER_PAIR * (PES * PES) as u64,
        (PER_PAIR * (PES * PES) as u64) as f64 / elapsed.as_secs_f64() / 1e6,
        report.stats.iter().map(|s| s.parks).collect::<Vec<_>>()
    );
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
}

#[test]
fn panicking_handler_is_reported_and_the_pe_keeps_running() {
    let _g = serial();
    let delivered = Arc::new(AtomicU64::new(0));
    let d = delivered.clone();
    let res = Converse::run(2, move |pe: &mut Pe| {
        let d = d.clone();
        let h = pe.register_handler(move |pe: &mut Pe, m: Msg| {
            let i = m.read_u64(0);
            if i == 3 {
                panic!("message {i} is poison");
            }
            if d.fetch_add(1, Ordering::Relaxed) + 1 == 9 {
                pe.exit_all();
            }
        });
        if pe.my_pe() == 0 {
            for i in 0..10 {
                pe.send(1, msg_u64(h, i, 0));
            }
            // and one naming no handler at all
            pe.send(1, msg_u64(HandlerId(42), 0, 0));
        }
        pe.schedule_forever();
        pe.handler_errors().len()
    });
    assert_eq!(delivered.load(Ordering::Relaxed), 9, "PE 1 kept going");
    let Err(RunError::Handlers(errs)) = res else {
        panic!("expected handler errors, got {res:?}");
    };
    assert_eq!(errs.len(), 2);
    assert_eq!((errs[0].pe, errs[0].handler), (1, HandlerId(0)));
    assert!(errs[0].message.contains("message 3 is poison"));
    assert_eq!(errs[1].handler, HandlerId(42));
    let shown = RunError::Handlers(errs).to_string();
    assert!(shown.contains("handler #0 on PE 1 failed: message 3 is poison"), "{shown}");
}

#[test]
fn panicking_start_closure_ends_the_run() {
    let _g = serial();
    let res = Converse::builder().pes(2).build().start(|pe: &mut Pe| {
        if pe.my_pe() == 1 {
            panic!("PE 1 cannot start");
        }
        pe.schedule_forever(); // released by PE 1's exit
        7
    });
    assert_eq!(res, Err(RunError::Pe { pe: 1, message: "PE 1 cannot start".into() }));
}

#[test]
fn oversubscribed_ring_parks_and_wakes() {
    let _g = serial();
    // 5 PEs on 2 CPUs, tiny spin: PEs park and must be woken by senders.
    const LAPS: u64 = 200;
    let res = Converse::builder().pes(5).spin(Duration::from_micros(1)).build().start_report(|pe: &mut Pe| {
        let hops = Rc::new(Cell::new(0u64));
        let h2 = hops.clone();
        let h = pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
            h2.set(h2.get() + 1);
            let lap = m.read_u64(0);
            let n = pe.num_pes();
            if pe.my_pe() == 0 {
                if lap == LAPS {
                    pe.exit_all();
                    return;
                }
                m.write_u64(0, lap + 1);
            }
            pe.send((pe.my_pe() + 1) % n, m);
        });
        if pe.my_pe() == 0 {
            pe.send(1, msg_u64(h, 1, 0));
        }
        pe.schedule_forever();
        hops.get()
    });
    assert!(res.handler_errors.is_empty());
    let hops: Vec<u64> = res.results.into_iter().map(Option::unwrap).collect();
    assert_eq!(hops, vec![LAPS, LAPS, LAPS, LAPS, LAPS]);
    assert!(res.stats.iter().map(|s| s.parks).sum::<u64>() > 0);
}

#[test]
fn bench_functions_return_plausible_numbers() {
    let _g = serial();
    for via_queue in [false, true] {
        let ns = bench_pingpong(2_000, via_queue);
        assert!(ns.is_finite() && ns > 0.0 && ns < 1e7, "{ns}");
    }
    let (queued, direct) = bench_queueing_overhead(100_000);
    assert!(queued > 0.0 && direct > 0.0, "{queued} {direct}");
    assert!(queued < 10_000.0 && direct < 10_000.0, "{queued} {direct}");
}

/// `CsdScheduleCount(0)` decrements before it tests for 0: it schedules until
/// stopped (it used to return at once, delivering nothing).
#[test]
fn schedule_count_zero_schedules_until_stopped() {
    let _g = serial();
    Converse::run(1, |pe: &mut Pe| {
        let (delivered, h) = counting_stopper(pe);
        for stop in [0, 0, 0, 0, 1, 0] {
            pe.send(0, msg_u64(h, stop, 0));
        }
        assert_eq!(pe.schedule_count(0), 0);
        assert_eq!(delivered.get(), 5, "ran until the handler that stopped it");
        pe.exit_all();
    })
    .unwrap();
}

/// A send to self goes to the PE's local queue (`CmiSendSelf`), which
/// `CsdNextMessage` checks after messages from other PEs: a message from PE 1
/// that arrived later still runs first. (Through the network inbox, the
/// self-send ran first.)
#[test]
fn a_send_to_self_runs_after_messages_from_other_pes() {
    let _g = serial();
    use std::sync::atomic::AtomicBool;
    let (self_sent, other_sent) = (AtomicBool::new(false), AtomicBool::new(false));
    let wait = |flag: &AtomicBool| {
        while !flag.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    Converse::builder()
        .pes(2)
        .spin(Duration::from_micros(20))
        .build()
        .start(|pe: &mut Pe| {
            let log = log.clone();
            let h = pe.register_handler(move |pe: &mut Pe, m: Msg| {
                let mut l = log.lock().unwrap();
                l.push((m.src_pe(), m.read_u64(0)));
                if l.len() == 2 {
                    pe.exit_scheduler();
                }
            });
            let stop = pe.register_handler(|pe: &mut Pe, _m: Msg| pe.exit_scheduler());
            if pe.my_pe() == 1 {
                // PE 0 sends to itself first; then this PE sends to PE 0.
                wait(&self_sent);
                pe.send(0, msg_u64(h, 1, 0));
                other_sent.store(true, Ordering::Release);
                pe.send(1, Msg::with_payload_len(stop, 0));
                return;
            }
            pe.send(0, msg_u64(h, 0, 0));
            self_sent.store(true, Ordering::Release);
            wait(&other_sent); // PE 1's message is in PE 0's inbox now
                               // start() schedules from here.
        })
        .unwrap();
    assert_eq!(*log.lock().unwrap(), vec![(Some(1), 1), (Some(0), 0)]);
}

/// Converse has no exit-all: a program ends when every PE has left its
/// scheduler (`ConverseExit` after `CsdScheduler(-1)`). Here each PE stops its
/// own scheduler and no global exit is ever sent; `start` must return (it used
/// to wait for a global exit forever).
#[test]
fn the_run_ends_when_every_pe_has_left_its_scheduler() {
    let _g = serial();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = Converse::builder().pes(3).spin(Duration::from_micros(20)).build().start(|pe: &mut Pe| {
            let stop = pe.register_handler(|pe: &mut Pe, _m: Msg| pe.exit_scheduler());
            if pe.my_pe() == 0 {
                pe.broadcast_all(Msg::with_payload_len(stop, 0));
            }
            pe.my_pe()
        });
        let _ = tx.send(r);
    });
    let r = rx.recv_timeout(Duration::from_secs(20)).expect("the run did not end when every PE left its scheduler");
    assert_eq!(r.unwrap(), vec![0, 1, 2]);
}
