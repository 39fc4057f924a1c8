//! The platform a policy runs on: locks, time and cost hooks.
//!
//! One policy implementation serves two engines. The simulator's platform turns every
//! hook into virtual time (a lock acquire waits until the modelled lock is free, a
//! [`Platform::touch`] of a task structure costs an L2 hit, a cache-to-cache transfer or
//! a remote-node read, and so on); the runtime's platform (`schedlab_rt::RtPlatform`)
//! makes them free. [`NullPlatform`] here is the free platform for tests and
//! micro-benchmarks.
//!
//! A platform value is a *per-CPU view*: [`Platform::this_cpu`] is the CPU on whose
//! behalf the policy is running (Linux's `smp_processor_id()`).

use crate::cpu::CpuId;
use crate::task::TaskId;

/// A cache line a policy reads or writes. The simulator maps each to an address
/// (task structures are 8 KB-aligned blocks, as in Linux 2.4) and charges for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Line {
    /// The scheduler-hot line of a task's `task_struct` (counter, nice, policy,
    /// processor, mm, has_cpu, run_list: the line at offset 32 in 2.4).
    Task(TaskId),
    /// The line after a task's hot line, where 2.4's `struct task_struct` keeps
    /// `run_list.prev` (offset 64: "only the 'next' pointer fits into the cacheline").
    /// `list_add` and `list_del` store into it, also into a neighbour's; the walk never
    /// reads it. Written only by policies whose list says so ([`crate::PrevLink`]).
    TaskLink(TaskId),
    /// The first line of a task's `task_struct` (offsets 0 to 31 in 2.4 and in the
    /// O(1) patches for it): `state`, `flags`, `sigpending`, `need_resched` and
    /// `lock_depth`. A wake-up stores `TASK_RUNNING` into it, a reschedule request
    /// stores `need_resched = 1` into the target CPU's running task's, and `schedule()`
    /// reads it and clears `need_resched`. Touched only through
    /// [`crate::task_state`], and only where the platform prices it
    /// ([`Platform::task_state_priced`]). On lines of 64 bytes or more it is the hot
    /// line.
    TaskState(TaskId),
    /// The same line of CPU `c`'s idle task, which a reschedule request to an idle CPU
    /// writes and the idle loop reads.
    IdleState(CpuId),
    /// A run queue's header (list head, length, MQS `max_na_*` fields).
    Queue(usize),
    /// A CPU's `aligned_data` (curr, last_schedule, curr_na_goodness).
    CpuData(CpuId),
    /// The node of a run queue's ordered tree that an insert or a pick rewrites
    /// (`cfs`'s leftmost leaf): heap memory apart from the queue's header and lock,
    /// so a wake-up into another CPU's queue moves it between CPUs as well.
    Tree(usize),
    /// A machine-wide word of scheduler state written by every CPU (PMQS's bitmap of
    /// non-idle CPUs).
    IdleMap,
}

/// Read or write of a [`Line`]; a write invalidates other CPUs' copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// Pure CPU work a policy does (no memory traffic; that is [`Platform::touch`]).
/// The simulator prices each in cycles of the modelled CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Fixed entry/exit path of `schedule()` (prologue, `switch_to` excluded).
    ScheduleEntry,
    /// Fixed path of `wake_up_process()` / `reschedule_idle()` entry.
    WakeupEntry,
    /// One `goodness()` evaluation's arithmetic and compare.
    Goodness,
    /// Link or unlink one task on a run list.
    ListOp,
    /// One task's counter recalculation, `c = c/2 + NICE_TO_TICKS(nice)`.
    Recalc,
    /// Timer tick accounting for the current task.
    Tick,
    /// Examine one CPU or queue during a placement or balancing decision.
    Examine,
    /// Insert or remove one task in an ordered (tree) run queue: a walk down the tree
    /// comparing keys, then the rebalancing, where a list link is four pointer stores.
    TreeOp,
}

impl Work {
    /// How many kinds there are: the size of a table indexed by [`Work::index`].
    pub const COUNT: usize = 8;
    /// A dense index, `0..COUNT`, for tables of prices or counts per kind.
    pub const fn index(self) -> usize {
        self as usize
    }
}
// COUNT is one past the last kind: add a kind after TreeOp and this fails to compile.
const _: () = assert!(Work::TreeOp.index() + 1 == Work::COUNT);

/// A lock made by a platform, guarding `T`. Closure-based so that the simulator can
/// account for the exact hold time of every critical section.
pub trait SchedLock<T, P: ?Sized> {
    /// `spin_lock`; run `f`; `spin_unlock`.
    fn with<R>(&self, p: &P, f: impl FnOnce(&mut T) -> R) -> R;
    /// `spin_trylock`: run `f` only if the lock is free right now.
    fn try_with<R>(&self, p: &P, f: impl FnOnce(&mut T) -> R) -> Option<R>;
    /// Read without the lock (racy peek; the simulator charges a cache-line read).
    fn peek<R>(&self, p: &P, f: impl FnOnce(&T) -> R) -> R;
    /// Uncharged read for observers and invariant checks, never for policy decisions.
    fn inspect<R>(&self, f: impl FnOnce(&T) -> R) -> R;
}

/// What an engine supplies to a policy.
pub trait Platform: Sized + 'static {
    /// `Send + Sync` whatever the engine, so that every policy (atomics plus platform
    /// locks) is `Send + Sync` by construction and one constructor serves both engines.
    type Lock<T: Send>: SchedLock<T, Self> + Send + Sync;

    /// Make a lock. `name` identifies it in lock statistics (e.g. `"runqueue_lock"`).
    fn new_lock<T: Send>(&self, name: &str, value: T) -> Self::Lock<T>;
    /// The CPU this policy call runs on.
    fn this_cpu(&self) -> CpuId;
    /// Current time in ns on this CPU (virtual in the simulator). Used for
    /// `last_schedule` and idle-time ordering.
    fn now(&self) -> u64;
    /// The time for a policy's own observation counters only (never for a decision):
    /// [`Platform::now`], except that the simulator charges no clock read for it, so
    /// that counting how long a piece of policy work took does not change the run.
    fn observe_now(&self) -> u64 {
        self.now()
    }
    /// CPU `cpu`'s task clock (Linux's `rq_clock_task`): [`Platform::now`] less the
    /// time the host kept that CPU from running anything (steal time), i.e. the time
    /// for which a task running there is charged. The simulator's CPUs are never
    /// stolen (the default). The runtime learns of a stall late (at the stalled
    /// worker's next tick), so a reading may be behind an earlier one: callers keep
    /// the largest reading, and the stolen time is then not charged to whoever runs
    /// next, as Linux defers steal it has not yet subtracted.
    fn task_clock(&self, cpu: CpuId) -> u64 {
        let _ = cpu;
        self.now()
    }
    /// Charge pure CPU work.
    fn charge(&self, work: Work);
    /// Charge a memory access to a cache line.
    fn touch(&self, line: Line, access: Access);
    /// Set `need_resched` on `cpu` and, if it is not this CPU, send it a reschedule IPI.
    fn resched(&self, cpu: CpuId);
    /// Run `f`, whose [`touch`](Platform::touch)es are *independent*: each line's
    /// address is known without loading another line `f` touches (a wake-up's task
    /// line and queue header, this CPU's own data), so an out-of-order core overlaps
    /// their misses. Never wrap a list walk (each task's address comes from the
    /// previous one), a load whose address comes from a line `f` touches, a lock
    /// acquire (a locked instruction orders memory) or a reschedule IPI. The
    /// simulator overlaps the accesses up to the machine's `mlp`; everywhere else (and
    /// at `mlp = 1`) this just runs `f`.
    #[inline]
    fn overlapped<R>(&self, f: impl FnOnce() -> R) -> R {
        f()
    }
    /// Run `f`, the part of `schedule()` after its pick: the switch bookkeeping and
    /// `schedule_tail`'s placement of a preempted `prev`. An observation mark only,
    /// with no cost on any platform: the simulator reports the task structures a
    /// `schedule()` reads under a run-queue lock as its run-queue walk, less those
    /// read in here (the placement reads the preempted task and the tasks running
    /// elsewhere, which walks no queue). Everywhere else this just runs `f`.
    #[inline]
    fn after_pick<R>(&self, f: impl FnOnce() -> R) -> R {
        f()
    }
    /// How the policy's task table lays out per-task state in host memory (read once,
    /// when the policy is built). Dense unless the engine wants real addresses to
    /// follow the kernel layout: the runtime returns kernel blocks with the spec's
    /// colours; the simulator keeps dense host memory and models addresses itself.
    fn task_layout(&self) -> crate::layout::TaskLayout {
        crate::layout::TaskLayout::Dense
    }
    /// Whether a task's [`Line::TaskLink`] is a line apart from its hot line in the
    /// memory this platform prices: the simulator's kernel layout on lines shorter than
    /// 128 bytes. Where it is not (the runtime's one-line `TaskSched`), a list touches
    /// only hot lines, as the memory does.
    #[inline]
    fn prev_link_apart(&self) -> bool {
        false
    }
    /// Whether this platform prices the kernel's `task_struct` words outside the
    /// scheduler's own fields ([`Line::TaskState`], [`Line::IdleState`]): the
    /// simulator's kernel layout. The runtime keeps no such words in its task lines
    /// (a worker's reschedule flag is the worker's), so there the state accesses are
    /// not charged at all.
    #[inline]
    fn task_state_priced(&self) -> bool {
        false
    }
    /// Whether the policy keeps observations whose cost grows with the number of
    /// tasks (a look over every task at each fork, for the simulator's per-task
    /// reports). Off by default: the runtime's spawns, and a micro-benchmark that
    /// forks 100,000 tasks, must not pay a scan each.
    #[inline]
    fn observes_task_population(&self) -> bool {
        false
    }
}

/// The free platform for tests and micro-benchmarks (policy unit tests, the
/// calibration of `schedlab validate`): real `parking_lot` locks, free hooks, a clock
/// the caller sets (so tests are deterministic), and reschedule requests recorded
/// rather than delivered. The engines have their own platforms.
#[derive(Debug)]
pub struct NullPlatform {
    pub cpu: CpuId,
    /// What [`Platform::now`] returns.
    pub clock: std::sync::atomic::AtomicU64,
    /// Every `resched` target, in order (inspect in tests; engines drain it).
    pub resched_log: parking_lot::Mutex<Vec<CpuId>>,
    /// Lock acquisitions (`with`, and `try_with` that got the lock), so tests can see
    /// whether a call took a lock at all.
    pub locks_taken: std::sync::atomic::AtomicU64,
    /// Steal time of CPU 0 (subtracted from its [`Platform::task_clock`]; the other
    /// CPUs have none), so that tests can see what a policy charges by.
    pub steal0: std::sync::atomic::AtomicU64,
}

impl NullPlatform {
    pub fn new(cpu: CpuId) -> NullPlatform {
        NullPlatform {
            cpu,
            clock: std::sync::atomic::AtomicU64::new(0),
            resched_log: parking_lot::Mutex::new(Vec::new()),
            locks_taken: std::sync::atomic::AtomicU64::new(0),
            steal0: std::sync::atomic::AtomicU64::new(0),
        }
    }
    /// The same platform seen from another CPU.
    pub fn on(&mut self, cpu: CpuId) -> &mut Self {
        self.cpu = cpu;
        self
    }
    pub fn set_now(&self, ns: u64) {
        self.clock.store(ns, std::sync::atomic::Ordering::Relaxed)
    }
    pub fn take_resched(&self) -> Vec<CpuId> {
        std::mem::take(&mut self.resched_log.lock())
    }
    /// Lock acquisitions so far.
    pub fn locks_taken(&self) -> u64 {
        self.locks_taken.load(std::sync::atomic::Ordering::Relaxed)
    }
    fn count_lock(&self) {
        self.locks_taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl<T> SchedLock<T, NullPlatform> for parking_lot::Mutex<T> {
    fn with<R>(&self, p: &NullPlatform, f: impl FnOnce(&mut T) -> R) -> R {
        p.count_lock();
        f(&mut self.lock())
    }
    fn try_with<R>(&self, p: &NullPlatform, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.try_lock().map(|mut g| {
            p.count_lock();
            f(&mut g)
        })
    }
    fn peek<R>(&self, _: &NullPlatform, f: impl FnOnce(&T) -> R) -> R {
        // A real runtime would read racily; a test platform may simply lock.
        f(&self.lock())
    }
    fn inspect<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.lock())
    }
}

impl Platform for NullPlatform {
    type Lock<T: Send> = parking_lot::Mutex<T>;
    fn new_lock<T: Send>(&self, _name: &str, value: T) -> Self::Lock<T> {
        parking_lot::Mutex::new(value)
    }
    fn this_cpu(&self) -> CpuId {
        self.cpu
    }
    fn now(&self) -> u64 {
        self.clock.load(std::sync::atomic::Ordering::Relaxed)
    }
    fn task_clock(&self, cpu: CpuId) -> u64 {
        let steal = if cpu == 0 { self.steal0.load(std::sync::atomic::Ordering::Relaxed) } else { 0 };
        self.now().saturating_sub(steal)
    }
    fn charge(&self, _: Work) {}
    fn touch(&self, _: Line, _: Access) {}
    fn resched(&self, cpu: CpuId) {
        self.resched_log.lock().push(cpu);
    }
    /// Policy tests read every observation.
    fn observes_task_population(&self) -> bool {
        true
    }
}
