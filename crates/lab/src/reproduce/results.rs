//! `results.json`: the claims and their verdicts, every published cell beside its
//! reproduction (`{published, reproduced, ratio, verdict}`) with the tally per source
//! table, and per section the catalog entry, the tables as shown and the sweep's own
//! `results.json` (every run's deterministic report). No wall clock.

use super::compare::{Comparison, Tally};
use super::Reproduction;
use serde_json::{json, Value};

pub fn render(rep: &Reproduction) -> String {
    let sections: Vec<Value> = rep
        .sections
        .iter()
        .map(|s| {
            let sweep: Value = serde_json::from_str(&s.sweep.results_json()).expect("sweep results are JSON");
            let mine: Vec<&Comparison> = rep.comparisons.iter().filter(|c| c.experiment == s.entry.name).collect();
            json!({
                "name": s.entry.name,
                "file": s.entry.file,
                "source": s.entry.source,
                "form": s.entry.form,
                "command": s.command(),
                "fidelity": super::fidelity_link(s.entry.name),
                "tally": Tally::of(mine.iter().copied()),
                "comparison": mine,
                "machines": s.sweep.plan.machines,
                "tables": s.views.iter().map(|v| &v.tables).collect::<Vec<_>>(),
                "sweep": sweep,
            })
        })
        .collect();
    let tallies: Vec<Value> = rep
        .published
        .iter()
        .map(|t| {
            json!({
                "table": t.id,
                "source": t.source,
                "source_table": t.table,
                "caption": t.caption,
                "convention": t.convention,
                "tally": Tally::of(rep.comparisons.iter().filter(|c| c.table == t.id)),
            })
        })
        .collect();
    let v = json!({
        "quick": rep.quick,
        "claims": rep.claims,
        "tallies": tallies,
        "comparison": rep.comparisons,
        "sections": sections,
    });
    serde_json::to_string_pretty(&v).expect("json") + "\n"
}
