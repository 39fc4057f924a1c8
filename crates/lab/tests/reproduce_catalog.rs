//! The reproduction catalog and the experiment files agree: every catalog entry's file
//! exists and carries the entry's name, and every experiment file is in the catalog
//! (a new experiment cannot be left out of the report by accident).

use schedlab_lab::reproduce::catalog::CATALOG;
use schedlab_lab::Experiment;
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

#[test]
fn catalog_and_experiment_files_agree() {
    for e in CATALOG {
        let path = Path::new(ROOT).join(e.file);
        let exp = Experiment::load(&path).unwrap_or_else(|err| panic!("{}: {err}", e.file));
        assert_eq!(exp.name, e.name, "{}", e.file);
        assert!(!e.views.is_empty(), "{}: no table", e.name);
        // Every metric a view shows is one the file's runs can give.
        exp.plan(true).unwrap_or_else(|err| panic!("{}: {err}", e.file));
    }
    let mut files: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("experiments"))
        .unwrap()
        .filter_map(|d| d.ok())
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    for f in files {
        let rel = format!("experiments/{f}");
        assert!(
            CATALOG.iter().any(|e| e.file == rel),
            "{rel} is not in the reproduction catalog (reproduce/catalog.rs)"
        );
    }
}

/// Every link a report makes into `fidelity.md` (one per section, one per claim) finds
/// its anchor there.
#[test]
fn every_section_and_claim_has_its_fidelity_entry() {
    let doc = schedlab_lab::reproduce::FIDELITY_MD;
    let claims = std::fs::read_to_string(Path::new(ROOT).join("experiments/published/claims.toml")).unwrap();
    let claim_ids: Vec<&str> =
        claims.lines().filter_map(|l| l.strip_prefix("id = \"")).map(|l| l.trim_end_matches('"')).collect();
    assert!(claim_ids.len() > 20, "claims.toml: {} ids", claim_ids.len());
    for id in CATALOG.iter().map(|e| e.name).chain(claim_ids) {
        let link = schedlab_lab::reproduce::fidelity_link(id);
        let anchor = link.split_once('#').expect("a link with an anchor").1;
        assert!(doc.contains(&format!("<a id=\"{anchor}\"></a>")), "docs/fidelity.md has no entry for {anchor}");
    }
}
