//! The one check of every path a command writes, made before any work (docs/cli.md,
//! "Output paths"):
//!
//! * a **file** (`sim --plot`, `sim --trace`, `validate --machine-out`) goes into a
//!   folder that exists: schedlab creates no folder for a file, so a mistyped folder is
//!   an error, not a new tree; the file may exist, but not as a directory, and both it
//!   and its folder must be writable;
//! * a **file-name prefix** (`validate --trace PREFIX`, which writes
//!   `PREFIX-<engine>-<workload>-<policy>.json`) is a file name without its end: the
//!   same rule for its folder;
//! * an **output directory** (`sweep --out`, `reproduce --out`, `bench --mpi --out`) is
//!   schedlab's own tree of results: the command creates it with any missing parents,
//!   as `mkdir -p` does, when it writes there; the check creates nothing (a command
//!   refused later, for bad input, leaves no folder behind) and requires the nearest
//!   existing folder on the path to take a new file.
//!
//! A path that fails is named in the message, and the command exits with code 2.

use std::path::{Path, PathBuf};

/// What a command writes at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    File,
    Prefix,
    Dir,
}

/// Check `path`, given as `flag`'s value, for writing `kind`; the error reads
/// `FLAG PATH: reason`.
pub fn check(flag: &str, path: &Path, kind: Out) -> Result<(), String> {
    let named = |why: String| format!("{flag} {}: {why}", path.display());
    let text = path.as_os_str().to_string_lossy();
    match kind {
        Out::File | Out::Prefix => {
            if text.is_empty() || text.ends_with('/') || path.is_dir() {
                return Err(named(match kind {
                    Out::Prefix => "needs a file-name prefix (e.g. out/trace), not a directory".into(),
                    _ => "needs a file name, not a directory".into(),
                }));
            }
            let folder = folder_of(path);
            if !folder.exists() {
                return Err(named(format!(
                    "folder {} does not exist (schedlab creates no folder for a file)",
                    folder.display()
                )));
            }
            if !folder.is_dir() {
                return Err(named(format!("{} is not a folder", folder.display())));
            }
            probe(&folder).map_err(named)?;
            if kind == Out::File && path.exists() {
                // Opened for appending, so an existing file is not emptied by the check.
                std::fs::OpenOptions::new().append(true).open(path).map_err(|e| named(format!("cannot write: {e}")))?;
            }
            Ok(())
        }
        Out::Dir => {
            if text.is_empty() {
                return Err(named("needs a directory name".into()));
            }
            // The path itself, or the nearest of its parents that exists.
            let mut existing = path.to_path_buf();
            while !existing.exists() {
                existing = folder_of(&existing);
            }
            if !existing.is_dir() {
                return Err(named(if existing == path {
                    "exists and is not a directory".into()
                } else {
                    format!("{} is not a directory", existing.display())
                }));
            }
            probe(&existing).map_err(named)
        }
    }
}

/// The folder a file at `path` goes into (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    path.parent().filter(|d| !d.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Whether `dir` takes a new file: one created under a name of this process's own and
/// removed at once.
fn probe(dir: &Path) -> Result<(), String> {
    let file = dir.join(format!(".schedlab-write-check-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&file);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_refuses_an_impossible_path_and_names_it() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let under_file = file.join("x.svg");
        for kind in [Out::File, Out::Prefix, Out::Dir] {
            let e = check("--flag", &under_file, kind).unwrap_err();
            assert!(e.starts_with(&format!("--flag {}: ", under_file.display())), "{kind:?}: {e}");
            let e = check("--flag", Path::new("/proc/schedlab-none/x"), kind).unwrap_err();
            assert!(e.starts_with("--flag /proc/schedlab-none/x: "), "{kind:?}: {e}");
        }
        assert!(check("--out", &file, Out::Dir).unwrap_err().contains("not a directory"));
        assert!(check("--plot", tmp.path(), Out::File).unwrap_err().contains("not a directory"));
        assert!(check("--trace", Path::new("out/"), Out::Prefix).unwrap_err().contains("not a directory"));
    }

    #[test]
    fn a_good_path_passes_and_the_check_creates_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let existing = tmp.path().join("kept.txt");
        std::fs::write(&existing, "kept").unwrap();
        check("--plot", &existing, Out::File).unwrap();
        assert_eq!(std::fs::read_to_string(&existing).unwrap(), "kept", "the check empties no file");
        check("--plot", &tmp.path().join("new.svg"), Out::File).unwrap();
        assert!(!tmp.path().join("new.svg").exists(), "a file is not created by its check");
        check("--trace", &tmp.path().join("t"), Out::Prefix).unwrap();
        let deep = tmp.path().join("a/b/c");
        check("--out", &deep, Out::Dir).unwrap();
        assert!(!tmp.path().join("a").exists(), "an output directory is made by its command, not its check");
        check("--out", tmp.path(), Out::Dir).unwrap();
        let e = check("--plot", &tmp.path().join("missing/x.svg"), Out::File).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        // The probe leaves nothing behind.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "kept.txt alone");
    }
}
