//! `schedlab cachecheck`: the simulator's L2 model against cachegrind on a grid of
//! run-queue walks. Needs valgrind; says "skipped" without it.

use schedlab_core::layout::{task_hot_addr, TASK_BLOCK};
use std::collections::BTreeMap;
use std::process::{Command, Output};

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("run schedlab")
}

fn have_valgrind() -> bool {
    Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success())
}

struct Geo {
    l2: u64,
    assoc: u64,
    line: u64,
}

/// Misses of `reps` in-order passes over `tasks` hot lines in an LRU cache, from first
/// principles: a set holding k ≤ assoc of the lines misses k times (cold); a set
/// holding more misses on every visit (a cyclic walk longer than LRU's ways).
fn seq_misses_lru(g: &Geo, tasks: u64, colours: u32, reps: u64) -> u64 {
    let sets = g.l2 / (g.assoc * g.line);
    let mut per_set: BTreeMap<u64, u64> = BTreeMap::new();
    for i in 0..tasks {
        // Any block base aligned to the set span and to the colour cycle will do.
        let a = task_hot_addr(0x4000_0000 + i * TASK_BLOCK, colours, g.line as u32);
        *per_set.entry((a / g.line) % sets).or_default() += 1;
    }
    per_set.values().map(|&k| if k <= g.assoc { k } else { k * reps }).sum()
}

struct Case {
    geo: &'static str,
    tasks: u64,
    colours: u32,
    order: &'static str,
    model: u64,
    cg: u64,
    reads: u64,
}

fn check(g: &Geo, name: &'static str, tasks: u64, colours: u32, order: &'static str, reps: u64) -> Case {
    let args = [
        "cachecheck".to_string(),
        format!("--l2={}", g.l2),
        format!("--assoc={}", g.assoc),
        format!("--line={}", g.line),
        format!("--tasks={tasks}"),
        format!("--colours={colours}"),
        format!("--reps={reps}"),
        format!("--order={order}"),
        "--format=json".into(),
    ];
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = schedlab(&a);
    let text = String::from_utf8_lossy(&o.stdout);
    let v: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {text}\n{}", String::from_utf8_lossy(&o.stderr)));
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} missing: {v}"));
    let c = Case {
        geo: name,
        tasks,
        colours,
        order,
        model: n("model_misses"),
        cg: n("cachegrind_misses"),
        reads: n("model_reads"),
    };
    assert_eq!(c.reads, tasks * reps, "{args:?}");
    assert_eq!(n("cachegrind_reads"), c.reads, "{args:?}: cachegrind counted other reads in the walk");
    let rel = (c.model as f64 - c.cg as f64).abs() / (c.cg.max(1) as f64);
    assert!(rel <= 0.02, "{args:?}: model {} vs cachegrind {} ({:.2} %)", c.model, c.cg, rel * 100.0);
    assert_eq!(o.status.code(), Some(0), "{args:?}: exit 0 when they agree");
    if order == "seq" {
        assert_eq!(c.model, seq_misses_lru(g, tasks, colours, reps), "{args:?}: model vs LRU from first principles");
    }
    c
}

#[test]
fn model_agrees_with_cachegrind_on_a_grid() {
    if !have_valgrind() {
        println!("skipped: valgrind not installed");
        return;
    }
    let geos = [
        ("512K 8-way 64B", Geo { l2: 512 << 10, assoc: 8, line: 64 }),
        ("256K 4-way 32B (Pentium Pro)", Geo { l2: 256 << 10, assoc: 4, line: 32 }),
    ];
    let reps = 4;
    let mut grid = Vec::new();
    for geo in 0..geos.len() {
        for tasks in [64, 512, 1024] {
            for colours in [1, 32] {
                for order in ["seq", "random"] {
                    grid.push((geo, tasks, colours, order));
                }
            }
        }
    }
    // The machine-notes case (last): 1024 nodes at an 8 KB stride miss on every step of
    // a 512 KB 8-way LL; offsets of (i mod 128) lines remove almost all those misses.
    grid.push((0, 1024, 128, "seq"));
    // Each check is a cachegrind run of about a second, nearly all valgrind's start-up:
    // two at a time, in grid order.
    let run = |(geo, tasks, colours, order): (usize, u64, u32, &'static str)| {
        check(&geos[geo].1, geos[geo].0, tasks, colours, order, reps)
    };
    let (mut cases, odd) = std::thread::scope(|s| {
        let odd = s.spawn(|| grid.iter().skip(1).step_by(2).map(|&c| run(c)).collect::<Vec<_>>());
        let even: Vec<Case> = grid.iter().step_by(2).map(|&c| run(c)).collect();
        (even, odd.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    let mut odd = odd.into_iter();
    cases = cases.into_iter().flat_map(|c| std::iter::once(c).chain(odd.next())).collect();
    let colour128 = cases.pop().unwrap();
    println!(
        "{:<30} {:>5} {:>7} {:>6} {:>6} {:>7} {:>10}",
        "geometry", "tasks", "colours", "order", "reads", "model", "cachegrind"
    );
    for c in cases.iter().chain([&colour128]) {
        println!(
            "{:<30} {:>5} {:>7} {:>6} {:>6} {:>7} {:>10}",
            c.geo, c.tasks, c.colours, c.order, c.reads, c.model, c.cg
        );
    }
    let find = |geo: usize, tasks, colours, order| {
        cases
            .iter()
            .find(|c| c.geo == geos[geo].0 && c.tasks == tasks && c.colours == colours && c.order == order)
            .unwrap()
    };
    let vanilla = find(0, 1024, 1, "seq");
    assert_eq!(vanilla.cg, vanilla.reads, "vanilla 1024 tasks on 512K 8-way: every step misses");
    assert_eq!(colour128.cg, 1024, "128 colours: only the first pass misses");
    // Pentium Pro geometry: 64 tasks crowd 8 sets of 4 ways without colours, spread over
    // 32 sets with 32 colours and fit.
    let (v, c) = (find(1, 64, 1, "seq"), find(1, 64, 32, "seq"));
    assert_eq!(v.cg, v.reads, "64 vanilla tasks thrash 8 sets of 4 ways");
    assert_eq!(c.cg, 64, "with 32 colours they fit: cold misses only");
    let (v, c) = (find(1, 64, 1, "random"), find(1, 64, 32, "random"));
    assert!(c.cg <= 64 && c.cg < v.cg, "coloured, a random walk misses once per task at most: {} vs {}", c.cg, v.cg);
}

#[test]
fn a_mismatched_geometry_is_caught() {
    if !have_valgrind() {
        println!("skipped: valgrind not installed");
        return;
    }
    // 300 tasks, 4 colours on a 512 KB L2: more hot lines than the c · s / 8 KB = 256
    // that fit, so the model's 8-way L2 misses on every in-order visit. Given 2 ways,
    // cachegrind's LL groups the blocks differently (a 256 KB set span) and keeps some:
    // the check must report the disagreement.
    let o = schedlab(&["cachecheck", "--tasks=300", "--colours=4", "--cachegrind-assoc=2", "--format=json"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["agree"], false);
    assert_eq!(v["model_misses"].as_u64(), Some(1200));
    assert!(v["cachegrind_misses"].as_u64().unwrap() < 1100, "{v}");
}

#[test]
fn missing_valgrind_and_bad_input_exit_2() {
    let empty = std::env::temp_dir().join(format!("schedlab-novalgrind-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["cachecheck", "--tasks", "8"])
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("valgrind is not installed"), "{o:?}");
    for (args, what) in [
        (&["cachecheck", "--l2", "lots"][..], "--l2"),
        (&["cachecheck", "--l2", "768k"], "power of two"),
        (&["cachecheck", "--colours", "3"], "--colours"),
        (&["cachecheck", "--tasks", "0"], "--tasks"),
        (&["cachecheck", "--line", "48"], "--line"),
        (&["cachecheck", "--order", "backwards"], "backwards"),
    ] {
        let o = schedlab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(what), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}
