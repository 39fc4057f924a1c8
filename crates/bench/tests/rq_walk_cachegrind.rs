//! Runtime colouring seen by a cache simulator: DSS's run-queue walk over 1,024
//! runnable tasks in the runtime's kernel task blocks (`rq_walk::policy_walks`), run
//! under cachegrind with explicit caches (this VM reports a bogus last-level cache).
//! Cachegrind 3.19 has no `--toggle-collect`, so each setting runs twice, with 0 and
//! with `WALKS` walks, and the difference is the walks' own count.
//!
//! What the arithmetic says, and the two LLs below check. A task's state (48 bytes)
//! fills one 64-byte line of its 8 KB block, the one holding the kernel's hot fields,
//! at `colour × 64` (`schedlab_core::layout`). Cachegrind indexes by virtual address:
//! for an LL of 1,024 sets (set bits 6–15) a vanilla task `b`'s line (block offset 0)
//! lands in set `128·(b mod 8)`, 8 sets for 1,024 lines, and the walk misses on every
//! task it visits in both LLs. The folded colour (0–31) adds to the set: 256 sets,
//! 2,048 line slots in the 8-way LL (`--LL=524288,8,64`, the machine notes') and 8,192
//! in the 32-way one (`--LL=2097152,32,64`), so the coloured walk's 1,024 lines fit
//! but for the sets where the blocks' colours fall unevenly.
//!
//! On the host the effect shows at 8–16 ways already: L2 and beyond are physically
//! indexed, and 4 KB page frames scatter bits 12 and up, so only the colour fixes the
//! set bits a page offset decides (`schedlab bench --only rq-walk`).
//!
//! The program under valgrind is this test binary itself, running the ignored
//! `child_walk` test with the setting in `RQ_WALK_CHILD`.

use std::path::Path;
use std::process::Command;

const TASKS: usize = 1024;
const WALKS: u64 = 8;
const CHILD_ENV: &str = "RQ_WALK_CHILD";

/// The program cachegrind runs: `RQ_WALK_CHILD=spec,walks`.
#[test]
#[ignore = "run by cachegrind_coloured_walk_misses_less under valgrind"]
fn child_walk() {
    let arg = std::env::var(CHILD_ENV).expect("RQ_WALK_CHILD=spec,walks");
    let (spec, walks) = arg.rsplit_once(',').expect("spec,walks");
    let walks: u64 = walks.parse().expect("walks is a number");
    let visited = schedlab_bench::rq_walk::policy_walks(spec, TASKS, walks).expect("walk runs");
    assert_eq!(visited, walks * TASKS as u64);
}

/// LL data read misses (`DLmr`) of one cachegrind run of the child.
fn dlmr(dir: &Path, ll: &str, spec: &str, walks: u64) -> u64 {
    let out = dir.join(format!("cg.{}.{}.{walks}", ll.replace(',', "_"), spec.replace([':', '='], "_")));
    let exe = std::env::current_exe().expect("test binary path");
    let st = Command::new("timeout")
        .args(["50", "valgrind", "--tool=cachegrind", "--cache-sim=yes"])
        .args(["--I1=32768,8,64", "--D1=32768,8,64", &format!("--LL={ll}")])
        .arg(format!("--cachegrind-out-file={}", out.display()))
        .arg(&exe)
        .args(["--ignored", "--exact", "child_walk", "--test-threads=1", "--quiet"])
        .env(CHILD_ENV, format!("{spec},{walks}"))
        .output()
        .expect("valgrind runs");
    assert!(st.status.success(), "cachegrind run of {spec} failed: {}", String::from_utf8_lossy(&st.stderr));
    let text = std::fs::read_to_string(&out).expect("cachegrind output file");
    let field = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no '{prefix}' in {}", out.display()))
    };
    let events: Vec<&str> = field("events:").split_whitespace().collect();
    let summary: Vec<u64> = field("summary:").split_whitespace().map(|v| v.parse().expect("a count")).collect();
    let i = events.iter().position(|e| *e == "DLmr").expect("DLmr event (--cache-sim=yes)");
    summary[i]
}

#[test]
fn cachegrind_coloured_walk_misses_less() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("skipped: valgrind not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("rq-walk-cg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // The two runs are separate processes whose set-up misses can differ by a few
    // (where the allocator puts things): a walk that fits the LL adds none, and its
    // run may then count one or two fewer than the run without it.
    const SETUP_SLACK: u64 = 64;
    const LLS: [&str; 2] = ["524288,8,64", "2097152,32,64"];
    // The eight cachegrind runs (each LL, each setting, without and with the walks),
    // two at a time: each is a single-threaded valgrind of a few seconds.
    let runs: Vec<(&str, &str, u64)> = LLS
        .iter()
        .flat_map(|&ll| ["dss", "dss:colours=32"].into_iter().flat_map(move |spec| [(ll, spec, 0), (ll, spec, WALKS)]))
        .collect();
    let counts: Vec<((&str, &str, u64), u64)> = std::thread::scope(|s| {
        let half = |parity: usize| {
            let (dir, runs) = (&dir, &runs);
            move || -> Vec<_> {
                runs.iter()
                    .skip(parity)
                    .step_by(2)
                    .map(|&(ll, spec, w)| ((ll, spec, w), dlmr(dir, ll, spec, w)))
                    .collect()
            }
        };
        let odd = s.spawn(half(1));
        let mut all = half(0)();
        all.extend(odd.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        all
    });
    let count = |ll: &str, spec: &str, walks: u64| {
        counts.iter().find(|(k, _)| *k == (ll, spec, walks)).map(|(_, n)| *n).expect("every run counted")
    };
    let walk_misses = |ll: &str, spec: &str| {
        let (base, walked) = (count(ll, spec, 0), count(ll, spec, WALKS));
        assert!(walked + SETUP_SLACK >= base, "{spec}: {walked} LL read misses with walks, {base} without");
        walked.saturating_sub(base)
    };
    let visits = WALKS * TASKS as u64;
    let mut got = Vec::new();
    for ll in LLS {
        let (vanilla, coloured) = (walk_misses(ll, "dss"), walk_misses(ll, "dss:colours=32"));
        println!(
            "DSS walk, {TASKS} runnable tasks, {WALKS} schedule() calls ({visits} tasks visited), --LL={ll}: \
             LL data read misses vanilla {vanilla}, colours=32 {coloured}"
        );
        got.push((vanilla, coloured));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let [(v8, c8), (v32, c32)] = got[..] else { unreachable!() };
    // Vanilla misses on (nearly) every task visited, once: one line per task.
    for v in [v8, v32] {
        assert!(v >= visits * 9 / 10, "vanilla walk missed only {v} times in {visits} visits");
        assert!(
            v <= visits + SETUP_SLACK,
            "vanilla walk missed {v} times in {visits} visits: more than one line a task"
        );
    }
    // The folded colour (core::layout::colour_of) spreads blocks a way apart over all
    // 32 colours: the coloured walk misses markedly less in both LLs.
    assert!(c8 * 3 <= v8, "colours=32 in an 8-way LL: {c8} LL read misses, vanilla {v8}: not 3× fewer");
    assert!(c32 * 10 <= v32, "colours=32: {c32} LL read misses, vanilla {v32}: not 10× fewer");
}
