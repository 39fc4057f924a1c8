//! `results.json`: per section, the catalog entry, the tables as shown, and the
//! sweep's own `results.json` (every run's deterministic report). No wall clock.

use super::Reproduction;
use serde_json::{json, Value};

pub fn render(rep: &Reproduction) -> String {
    let sections: Vec<Value> = rep
        .sections
        .iter()
        .map(|s| {
            let sweep: Value = serde_json::from_str(&s.sweep.results_json()).expect("sweep results are JSON");
            json!({
                "name": s.entry.name,
                "file": s.entry.file,
                "source": s.entry.source,
                "form": s.entry.form,
                "command": s.command(),
                "machines": s.sweep.plan.machines,
                "tables": s.views.iter().map(|v| &v.tables).collect::<Vec<_>>(),
                "sweep": sweep,
            })
        })
        .collect();
    let v = json!({ "quick": rep.quick, "sections": sections });
    serde_json::to_string_pretty(&v).expect("json") + "\n"
}
