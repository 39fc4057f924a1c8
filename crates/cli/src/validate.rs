//! `schedlab validate`: the simulator against the real runtime, side by side.

use std::process::ExitCode;

pub fn run(quick: bool, json: bool, workers: usize, machine_out: Option<String>) -> ExitCode {
    if let Err(e) = crate::check_threads("--workers", workers) {
        eprintln!("schedlab validate: {e}");
        return ExitCode::from(2);
    }
    // Before minutes of measuring: the machine file's directory must be there.
    if let Some(path) = &machine_out {
        let dir = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(Err(e)) = dir.map(std::fs::create_dir_all) {
            eprintln!("schedlab validate: --machine-out {path}: {e}");
            return ExitCode::from(2);
        }
    }
    eprintln!("calibrating this machine ({workers} workers)...");
    let cal = match schedlab_validate::calibrate(workers, quick) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("schedlab validate: {e}");
            return ExitCode::from(1);
        }
    };
    if let Some(path) = machine_out {
        let m = cal.machine();
        let text = format!(
            "# Measured on this machine by `schedlab validate` ({} workers). All costs in ns (mhz = 1000).\n{}",
            workers,
            machine_toml(&m)
        );
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("schedlab validate: cannot write {path}: {e}");
            return ExitCode::from(2);
        }
        eprintln!("host machine written to {path}");
    }
    let workloads: Vec<String> = if quick {
        vec!["chat:rooms=1,messages=40".into(), "pingpong:rounds=5000".into()]
    } else {
        vec!["chat:rooms=2,messages=100".into(), "chat:rooms=4,messages=100".into(), "pingpong:rounds=50000".into()]
    };
    let policies = crate::runtime_policies();
    match schedlab_validate::validate(&cal, &policies, &workloads, 1) {
        Ok(rows) => {
            if json {
                let out = serde_json::json!({ "calibration": cal, "rows": rows });
                println!("{}", serde_json::to_string_pretty(&out).expect("serialise"));
            } else {
                print!("{}", schedlab_validate::render(&cal, &rows));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("schedlab validate: {e}");
            ExitCode::from(1)
        }
    }
}

fn machine_toml(m: &schedlab_sim::Machine) -> String {
    let costs = toml::Table::try_from(&m.costs).expect("costs serialise");
    format!(
        "name = \"{}\"\ncpus = {}\nnodes = 1\nmhz = {}\nl2_kb = {}\nl2_assoc = {}\nline_bytes = {}\nhz = {}\n\n[costs]\n{}",
        m.name, m.cpus, m.mhz, m.l2_kb, m.l2_assoc, m.line_bytes, m.hz, costs
    )
}
