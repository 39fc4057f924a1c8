//! Plan every selected experiment first (so a bad file or name stops the command
//! before any run), then run them in catalog order, each through [`crate::run_sweep`]
//! exactly as `schedlab sweep` does, parallel over the runs of one experiment.

use super::catalog::{self, Entry};
use super::published::{self, PubTable};
use super::MEASURED;
use super::{claims, compare, section, Reproduction};
use crate::{run_sweep, Experiment, LabError, Plan, SweepOptions};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// How to reproduce.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The experiments' `[quick]` sizes.
    pub quick: bool,
    /// Catalog names to run (empty: all).
    pub only: Vec<String>,
    /// Worker threads; 0 = all cores.
    pub threads: usize,
    /// The directory holding `chat-numa.toml`, ... (the catalog's `experiments/`).
    pub experiments: PathBuf,
    /// Progress on stderr: bars on a terminal, plain lines otherwise.
    pub progress: bool,
}

/// The catalog entries `only` selects, in catalog order; an unknown name is a
/// configuration error that lists the known ones. [`MEASURED`] (the real-runtime
/// part, run by the caller) is a known name that selects no simulator experiment.
pub fn select(only: &[String]) -> Result<Vec<&'static Entry>, LabError> {
    for n in only {
        if catalog::find(n).is_none() && n != MEASURED {
            return Err(LabError::Config(format!(
                "--only {n:?}: no such experiment (known: {}, {MEASURED})",
                catalog::names().join(", ")
            )));
        }
    }
    Ok(catalog::CATALOG.iter().filter(|e| only.is_empty() || only.iter().any(|n| n == e.name)).collect())
}

/// Load and plan one entry's experiment file.
fn plan(entry: &Entry, opts: &Options) -> Result<Plan, LabError> {
    let file = entry.file.strip_prefix("experiments/").unwrap_or(entry.file);
    let path = opts.experiments.join(file);
    if !path.is_file() {
        return Err(LabError::Config(format!(
            "{}: experiment file of `{}` not found (give the experiments directory with --experiments)",
            path.display(),
            entry.name
        )));
    }
    let exp = Experiment::load(&path)?;
    if exp.name != entry.name {
        return Err(LabError::Config(format!(
            "{}: name = {:?}, but the reproduction catalog lists this file as {:?}",
            path.display(),
            exp.name,
            entry.name
        )));
    }
    exp.plan(opts.quick)
}

/// Run the selected experiments and build the report's sections.
pub fn run(opts: &Options) -> Result<Reproduction, LabError> {
    let entries = select(&opts.only)?;
    let plans: Vec<Plan> = entries.iter().map(|e| plan(e, opts)).collect::<Result<_, _>>()?;
    let (published, claim_list) = load_published(&opts.experiments)?;
    let total: usize = plans.iter().map(|p| p.runs().len()).sum();
    let tty = opts.progress && std::io::stderr().is_terminal();
    let multi = tty.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
    let overall = match &multi {
        Some(m) => {
            let pb = m.add(ProgressBar::new(total as u64));
            pb.set_style(
                ProgressStyle::with_template("reproduce [{bar:40}] {pos}/{len} runs, {elapsed} ({eta} left) {msg}")
                    .expect("progress template")
                    .progress_chars("=> "),
            );
            Some(pb)
        }
        None => None,
    };
    let start = Instant::now();
    let mut sections = Vec::new();
    let mut threads = 0;
    let n = entries.len();
    for (i, (entry, plan)) in entries.into_iter().zip(plans).enumerate() {
        let runs = plan.runs().len();
        match &overall {
            Some(o) => o.set_message(format!("experiment {}/{n}: {}", i + 1, entry.name)),
            None if opts.progress => eprintln!("reproduce: [{}/{n}] {}: {runs} runs", i + 1, entry.name),
            None => {}
        }
        let sweep_opts = SweepOptions {
            threads: opts.threads,
            progress: opts.progress,
            multi: multi.clone(),
            overall: overall.clone(),
            ..SweepOptions::default()
        };
        let t = Instant::now();
        let sweep = run_sweep(plan, &sweep_opts)?;
        threads = sweep.threads;
        if overall.is_none() && opts.progress {
            eprintln!(
                "reproduce: [{}/{n}] {} done in {:.1} s ({} failed)",
                i + 1,
                entry.name,
                t.elapsed().as_secs_f64(),
                sweep.failures.len()
            );
        }
        sections.push(section(entry, sweep, &published)?);
    }
    if let Some(o) = overall {
        o.finish_and_clear();
    }
    let comparisons = compare::compare(&published, &sections);
    let claims = claims::judge_all(&claim_list, &published, &comparisons, claims::Observed::from_sections(&sections));
    Ok(Reproduction {
        quick: opts.quick,
        sections,
        wall_s: start.elapsed().as_secs_f64(),
        threads,
        measured: None,
        published,
        comparisons,
        claims,
    })
}

/// The published tables and the claims of `experiments/published/`, checked: every cell
/// names an experiment of the catalog (or the measured part).
pub fn load_published(experiments: &std::path::Path) -> Result<(Vec<PubTable>, Vec<claims::Claim>), LabError> {
    let dir = experiments.join("published");
    let tables = published::load_dir(&dir)?;
    for t in &tables {
        for c in &t.cells {
            if catalog::find(&c.experiment).is_none() && c.experiment != published::MEASURED_EXPERIMENT {
                return Err(LabError::Config(format!(
                    "{}: cell {:?} / {:?}: no experiment {:?} in the reproduction catalog (known: {}, {})",
                    dir.join(format!("{}.toml", t.id)).display(),
                    c.row,
                    c.col,
                    c.experiment,
                    catalog::names().join(", "),
                    published::MEASURED_EXPERIMENT
                )));
            }
        }
    }
    let claim_list = claims::load(&dir, &tables)?;
    Ok((tables, claim_list))
}
