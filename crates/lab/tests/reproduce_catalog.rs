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
