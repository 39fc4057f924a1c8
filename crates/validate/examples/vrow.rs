//! Probe: one or more `validate` rows (both engines, with distributions), on a
//! quick calibration. `target/release/examples/vrow 'fair;fair:wakeup_granularity=100us' 'chat:rooms=1,messages=40' [PREFIX]`
//! prints validate's table; with PREFIX both engines' traces are written as
//! `PREFIX-<sim|real>-<n>.json` (n: the row's index).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = |i: usize, d: &str| -> Vec<String> {
        args.get(i).map_or(d, |s| s.as_str()).split(';').map(String::from).collect()
    };
    let policies = split(0, "dss");
    let workloads = split(1, "pingpong:rounds=5000");
    let prefix = args.get(2).cloned();
    let cal = schedlab_validate::calibrate(2, true).expect("calibrate");
    // `VROW_MACHINE=FILE`: also write the calibrated machine's costs (TOML), to re-run
    // the simulator alone on the same calibration (e.g. with one cost changed).
    if let Ok(f) = std::env::var("VROW_MACHINE") {
        let m = cal.machine();
        let geo = format!("l2_kb = {}\nl2_assoc = {}\nline_bytes = {}\n", m.l2_kb, m.l2_assoc, m.line_bytes);
        let costs = toml::Table::try_from(&m.costs).expect("costs serialise");
        std::fs::write(
            &f,
            format!(
                "name = \"{}\"\ncpus = {}\nhz = {}\nmhz = {}\ntick_phase = \"{}\"\n{geo}\n[costs]\n{costs}",
                m.name,
                m.cpus,
                m.hz,
                m.mhz,
                m.tick_phase.name()
            ),
        )
        .expect("machine file");
    }
    // `VROW_SLOW=1,10,30`: the simulator alone, on the host machine slowed down by each
    // factor (every cost in cycles lasts that many times longer): which decisions depend
    // on the absolute time scale.
    if let Ok(f) = std::env::var("VROW_SLOW") {
        for k in f.split(',').map(|s| s.parse::<u32>().expect("factor")) {
            let mut m = cal.machine();
            m.mhz = (m.mhz / k).max(1);
            for p in &policies {
                for w in &workloads {
                    let spec = schedlab_core::PolicySpec::parse(p).expect("policy");
                    let wl = schedlab_workloads::parse_workload(w).expect("workload");
                    let r = schedlab_sim::simulate(&m, &spec, &wl, &schedlab_sim::SimConfig::default()).expect("sim");
                    println!(
                        "slow x{k:<3} {p:<28} {w:<30} virtual {:>8.2} ms  switches {:>6}  {:.0} {}",
                        r.virtual_ns as f64 / 1e6,
                        r.context_switches,
                        r.throughput,
                        r.throughput_unit
                    );
                }
            }
        }
        return;
    }
    let mut n = 0;
    let mut sink = |e: schedlab_validate::Engine, _: &str, _: &str, t: &schedlab_core::trace::Trace| {
        if let Some(p) = &prefix {
            let f = std::fs::File::create(format!("{p}-{}-{}.json", e.name(), n / 2)).map_err(|e| e.to_string())?;
            schedlab_core::trace::chrome::write(t, f).map_err(|e| e.to_string())?;
        }
        n += 1;
        Ok(())
    };
    let rows = schedlab_validate::validate(&cal, &policies, &workloads, 1, true, Some(&mut sink)).expect("validate");
    print!("{}", schedlab_validate::render(std::slice::from_ref(&cal), &rows));
}
