//! The reproduction's one list: which experiment file reproduces which table or figure
//! of which source document (tagged S1, S6, S7, S10 as in docs/sources.md), and in what
//! form the report shows it. Adding an experiment to the report
//! is one [`Entry`] here.

/// A dimension of an experiment's matrix, as a table axis. `Balancer` and `Pool` split
/// a PMQS policy spec (`pmqs:pool=4,lb=lbp,period=45` → LBP-45, pool 4); a policy
/// without them (DSS) is listed under the table instead of in a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    Machine,
    Policy,
    Workload,
    Balancer,
    Pool,
}

/// What a cell holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// `100·(X−B)/B` against the experiment's baseline policy, paired by seed.
    Pct,
    /// The field itself, in the unit given.
    Abs(Unit),
}

/// How an absolute value is shown; the scale (k, M; µs, ms, s) is chosen per table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// The report's `throughput_unit` (msg/s, requests/s, Mbps, ...), with k/M prefixes.
    Throughput,
    /// Nanoseconds in the report, shown in ns/µs/ms/s.
    Time,
    /// A ratio 0..1, shown as a percentage.
    Ratio,
    /// Already a percentage.
    Percent,
    /// A count, with k/M prefixes.
    Count,
}

/// A summary row under an absolute table (the source's headline number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summary {
    None,
    /// The highest mean in each column ("peak throughput over the client sweep").
    Peak,
    /// The highest mean in each column, for a lower-is-better figure ("worst").
    Worst,
}

/// How a table is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plot {
    None,
    /// Grouped bars with min..max whiskers; groups are the table's columns and bars its
    /// rows when `groups_are_cols` (PMQS: pool size groups, balancer bars), else the
    /// other way round.
    Bars {
        groups_are_cols: bool,
    },
    /// Lines over the table's rows as a numeric x axis (CPUs, clients), one per column.
    Lines {
        x_label: &'static str,
    },
}

/// One table of a section: a report field shown over three of the matrix's dimensions.
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// Report field (`throughput`, `locks.runqueue_lock.hold_max_ns`, ...).
    pub metric: &'static str,
    /// What the source calls it, for the table heading.
    pub label: &'static str,
    pub value: Value,
    /// One table per value of this dimension.
    pub panel: Dim,
    pub row: Dim,
    pub col: Dim,
    pub summary: Summary,
    pub plot: Plot,
    /// Lower is better (shown in the heading, so that the sign reads right).
    pub lower_is_better: bool,
}

/// One section of the report.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// Matches the experiment file's `name`; `--only` takes it.
    pub name: &'static str,
    /// Relative to the repository root.
    pub file: &'static str,
    /// The source document and the table/figure this reproduces.
    pub source: &'static str,
    /// The form: rows, columns, units, sign, as the source shows them, and what of the
    /// source is not recovered.
    pub form: &'static str,
    /// Policy labels as the source writes them (spec → label); others get a generic label.
    pub aliases: &'static [(&'static str, &'static str)],
    pub views: &'static [View],
}

const fn pct(metric: &'static str, label: &'static str, panel: Dim, row: Dim, col: Dim, plot: Plot) -> View {
    View { metric, label, value: Value::Pct, panel, row, col, summary: Summary::None, plot, lower_is_better: false }
}

const fn abs(metric: &'static str, label: &'static str, unit: Unit, panel: Dim, row: Dim, col: Dim) -> View {
    View {
        metric,
        label,
        value: Value::Abs(unit),
        panel,
        row,
        col,
        summary: Summary::None,
        plot: Plot::None,
        lower_is_better: false,
    }
}

const POOL_BARS: Plot = Plot::Bars { groups_are_cols: true };

/// What a Chat run does inside the scheduler, per policy (rows) and load (columns): the
/// intermediate quantities behind its throughput (docs/fidelity.md, chat-numa).
const fn chat_inside(metric: &'static str, label: &'static str, unit: Unit) -> View {
    View { lower_is_better: true, ..abs(metric, label, unit, Dim::Machine, Dim::Policy, Dim::Workload) }
}
const CHAT_WALK: View = chat_inside("walk_len_mean", "task structures read per schedule() (walk)", Unit::Count);
const CHAT_HOLD: View = chat_inside("locks.runqueue_lock.hold_mean_ns", "run-queue lock mean hold time", Unit::Time);
const CHAT_CONTENTION: View =
    chat_inside("locks.runqueue_lock.contention_pct", "run-queue lock contention", Unit::Percent);
const CHAT_SWITCHES: View = chat_inside("switches_per_message", "context switches per message received", Unit::Count);

const PMQS_CHAT: &[View] = &[
    pct("throughput", "Chat throughput", Dim::Workload, Dim::Balancer, Dim::Pool, POOL_BARS),
    CHAT_WALK,
    CHAT_HOLD,
    CHAT_CONTENTION,
    CHAT_SWITCHES,
];
const PMQS_MK: &[View] = &[View {
    lower_is_better: true,
    ..pct("virtual_ns", "Mkbench completion time", Dim::Workload, Dim::Balancer, Dim::Pool, POOL_BARS)
}];
const VANILLA: &[(&str, &str)] = &[("dss", "vanilla"), ("dss:colours=32", "c32"), ("mqs", "MQ")];

/// Every section of the report, in the report's order (by source document).
pub const CATALOG: &[Entry] = &[
    Entry {
        name: "chat-numa",
        file: "experiments/chat-numa.toml",
        source: "S1 (Franke et al., PMQS, ALS 2001), section \"Chat Evaluation\", on the 4 × 4 NUMA-Q",
        form: "% difference of Chat throughput from MQS, 100·(T_X − T_MQS)/T_MQS, higher is better; rows: load balancer, columns: pool size (4 = a quad, 8 = two quads, 16 = the machine), one table per Chat (rooms, messages); DSS vs MQS under the table. Then, per policy (rows) and load (columns), what the runs do inside the scheduler: task structures read per `schedule()`, the run-queue lock's mean hold time and contention, context switches per message received.",
        aliases: &[],
        views: PMQS_CHAT,
    },
    Entry {
        name: "chat-smp",
        file: "experiments/chat-smp.toml",
        source: "S1 (Franke et al., PMQS, ALS 2001), section \"Chat Evaluation\", on the 8-way SMP",
        form: "% difference of Chat throughput from MQS, higher is better; rows: load balancer, columns: pool size (1, 2, 4, 8 CPUs), one table per Chat (rooms, messages); DSS vs MQS under the table. Then, per policy (rows) and load (columns), what the runs do inside the scheduler: task structures read per `schedule()`, the run-queue lock's mean hold time and contention, context switches per message received.",
        aliases: &[],
        views: PMQS_CHAT,
    },
    Entry {
        name: "mkbench-numa",
        file: "experiments/mkbench-numa.toml",
        source: "S1 (Franke et al., PMQS, ALS 2001), Mkbench evaluation on the NUMA-Q (its tables were not recovered)",
        form: "% difference of completion time from MQS, lower (negative) is better; rows: load balancer, columns: pool size. The source's Mkbench configuration and table form are unknown; this follows the Chat tables' form.",
        aliases: &[],
        views: PMQS_MK,
    },
    Entry {
        name: "mkbench-smp",
        file: "experiments/mkbench-smp.toml",
        source: "S1 (Franke et al., PMQS, ALS 2001), Mkbench evaluation on the 8-way SMP (its tables were not recovered)",
        form: "% difference of completion time from MQS, lower (negative) is better; rows: load balancer, columns: pool size. Form inferred as for mkbench-numa.",
        aliases: &[],
        views: PMQS_MK,
    },
    Entry {
        name: "webbench-cpus",
        file: "experiments/webbench-cpus.toml",
        source: "S6 (Yamamura et al., cache colouring, FREENIX 2002) §5.2.1: WebBench, 256 httpds, on 1–8 × P-III Xeon 550",
        form: "Per CPU count (rows): speed-up of c32 and MQ over vanilla in %; then the L2 miss ratio during the run-queue walk (%), run-queue lock contention (%), and mean and max run-queue lock hold time, each per kernel (columns).",
        aliases: VANILLA,
        views: &[
            View {
                plot: Plot::Lines { x_label: "CPUs" },
                ..pct("throughput", "WebBench throughput", Dim::Workload, Dim::Machine, Dim::Policy, Plot::None)
            },
            View {
                plot: Plot::Lines { x_label: "CPUs" },
                ..abs(
                    "rq_traversal_miss_ratio",
                    "L2 miss ratio during the run-queue walk",
                    Unit::Ratio,
                    Dim::Workload,
                    Dim::Machine,
                    Dim::Policy,
                )
            },
            abs(
                "locks.runqueue_lock.contention_pct",
                "run-queue lock contention",
                Unit::Percent,
                Dim::Workload,
                Dim::Machine,
                Dim::Policy,
            ),
            abs(
                "locks.runqueue_lock.hold_mean_ns",
                "run-queue lock mean hold time",
                Unit::Time,
                Dim::Workload,
                Dim::Machine,
                Dim::Policy,
            ),
            abs(
                "locks.runqueue_lock.hold_max_ns",
                "run-queue lock max hold time",
                Unit::Time,
                Dim::Workload,
                Dim::Machine,
                Dim::Policy,
            ),
        ],
    },
    Entry {
        name: "colours-threshold",
        file: "experiments/colours-threshold.toml",
        source: "S6 (Yamamura et al., cache colouring, FREENIX 2002) §4.3, Figure 8 and equation (3): colours × httpds × L2 size on 4 × Pentium Pro 200",
        form: "Per L2 size (one table each): rows httpds, columns colours; % improvement of throughput over vanilla (higher is better). Then the run-queue-walk L2 miss ratio (Table 2's quantity) and bus transactions (all, and on task lines; Figures 7–8) per kernel. The figures' values were not recovered.",
        aliases: &[
            ("dss", "vanilla"),
            ("dss:colours=4", "4 colours"),
            ("dss:colours=8", "8 colours"),
            ("dss:colours=16", "16 colours"),
            ("dss:colours=32", "32 colours"),
        ],
        views: &[
            pct("throughput", "WebBench throughput", Dim::Machine, Dim::Workload, Dim::Policy, Plot::Bars {
                groups_are_cols: false,
            }),
            View {
                plot: Plot::Bars { groups_are_cols: false },
                ..abs(
                    "rq_traversal_miss_ratio",
                    "L2 miss ratio during the run-queue walk",
                    Unit::Ratio,
                    Dim::Machine,
                    Dim::Workload,
                    Dim::Policy,
                )
            },
            View {
                plot: Plot::Bars { groups_are_cols: false },
                ..abs("bus_transactions.total", "bus transactions, all", Unit::Count, Dim::Machine, Dim::Workload, Dim::Policy)
            },
            View {
                plot: Plot::Bars { groups_are_cols: false },
                ..abs(
                    "bus_transactions.task",
                    "bus transactions on task lines",
                    Unit::Count,
                    Dim::Machine,
                    Dim::Workload,
                    Dim::Policy,
                )
            },
        ],
    },
    Entry {
        name: "chat-colours",
        file: "experiments/chat-colours.toml",
        source: "S6 (Yamamura et al., cache colouring, FREENIX 2002) §5.2.2: Chat on the 8-way (vanilla, c32, MQ; the paper ran (30,300); its values were not recovered)",
        form: "% difference of Chat throughput from MQ, higher is better; rows: Chat (rooms, messages), columns: kernel. Then, per policy (rows) and load (columns), what the runs do inside the scheduler: task structures read per `schedule()`, the run-queue lock's mean hold time and contention, context switches per message received.",
        aliases: VANILLA,
        views: &[
            pct("throughput", "Chat throughput", Dim::Machine, Dim::Workload, Dim::Policy, Plot::Bars {
                groups_are_cols: false,
            }),
            CHAT_WALK,
            CHAT_HOLD,
            CHAT_CONTENTION,
            CHAT_SWITCHES,
        ],
    },
    Entry {
        name: "netbench-up",
        file: "experiments/netbench-up.toml",
        source: "S10 (Theurer, \"(O)1 Netbench results\", LKML 31 Jan 2002): uniprocessor",
        form: "Throughput per client count (rows 4..48), one column per scheduler, and the peak over the sweep (the source's headline figure; its peaks are set beside the table's peak row). Then the CPU's busy share and the mean run-queue length at `schedule()`.",
        aliases: &[("dss", "2.4 (DSS)")],
        views: NETBENCH_THROUGHPUT,
    },
    Entry {
        name: "netbench-4way",
        file: "experiments/netbench-4way.toml",
        source: "S10 (Theurer, \"(O)1 Netbench results\", LKML 31 Jan 2002): 4-way PIII Xeon 700, with and without IRQ + process affinity",
        form: "Throughput per client count (rows), one column per scheduler, one table per machine (without / with affinity), and the peak over the sweep. Then the CPUs' busy share and the mean run-queue length at `schedule()`.",
        aliases: &[("dss", "2.4 (DSS)")],
        views: NETBENCH_THROUGHPUT,
    },
    Entry {
        name: "netbench-starvation",
        file: "experiments/netbench-starvation.toml",
        source: "S10 (Theurer, \"(O)1 Netbench results\", LKML 31 Jan 2002): the uniprocessor symptom, smbds and new tasks that cannot get a CPU under O(1)",
        form: "Longest time an smbd waited to run (runnable → dispatched) per client count (rows), one column per scheduler, and the worst over the sweep. The report saw client errors from 20 clients on under O(1) and > 2 min to start `ps`, sub-second under 2.4. Then the longest `ps` wait to run and the timed-out operations (a wait or request unfinished when the case ends counts with its length so far).",
        aliases: &[("dss", "2.4 (DSS)")],
        views: SMBD_WAIT,
    },
    Entry {
        name: "netbench-live",
        file: "experiments/netbench-live.toml",
        source: "S10 (Theurer, \"(O)1 Netbench results\", LKML 31 Jan 2002): the uniprocessor cases as the report ran them, clients joining one live server 4 at a time, each case 3 minutes",
        form: "Longest time an smbd that a case adds waited to run (runnable → dispatched), per client count (rows), one column per scheduler, and the worst over the sweep; the smbds of earlier cases keep running beside them. Then the longest `ps` wait to run (the probe runs in the first case) and the timed-out operations.",
        aliases: &[("dss", "2.4 (DSS)")],
        views: SMBD_WAIT,
    },
];

/// The entry named `name`.
pub fn find(name: &str) -> Option<&'static Entry> {
    CATALOG.iter().find(|e| e.name == name)
}

/// Every entry's name, for messages.
pub fn names() -> Vec<&'static str> {
    CATALOG.iter().map(|e| e.name).collect()
}

/// NetBench throughput per client count, one line per scheduler, with the peak over the
/// sweep: the report's form on the uniprocessor and on the 4-way alike.
const NETBENCH_THROUGHPUT: &[View] = &[
    View {
        summary: Summary::Peak,
        plot: Plot::Lines { x_label: "clients" },
        ..abs("throughput", "NetBench throughput", Unit::Throughput, Dim::Machine, Dim::Workload, Dim::Policy)
    },
    abs("cpu_busy_pct", "CPU busy", Unit::Percent, Dim::Machine, Dim::Workload, Dim::Policy),
    abs(
        "rq_at_schedule.mean",
        "run-queue length at schedule(), mean",
        Unit::Count,
        Dim::Machine,
        Dim::Workload,
        Dim::Policy,
    ),
];

/// The longest wait of an smbd to run per client count, one line per scheduler, with the
/// worst over the sweep: the starvation's form, for fresh and live servers alike.
const SMBD_WAIT: &[View] = &[
    View {
        summary: Summary::Worst,
        plot: Plot::Lines { x_label: "clients" },
        lower_is_better: true,
        ..abs("waits.smbd.max_ns", "longest smbd wait to run", Unit::Time, Dim::Machine, Dim::Workload, Dim::Policy)
    },
    View {
        lower_is_better: true,
        ..abs("waits.ps.max_ns", "longest `ps` wait to run", Unit::Time, Dim::Machine, Dim::Workload, Dim::Policy)
    },
    View {
        lower_is_better: true,
        ..abs("responses.timed_out", "timed-out operations", Unit::Count, Dim::Machine, Dim::Workload, Dim::Policy)
    },
];
