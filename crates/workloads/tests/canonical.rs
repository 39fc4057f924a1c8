//! Canonical spec strings are written into results and report files, so they must not
//! change: `data/canonical-specs.tsv` holds policy (`P`) and workload (`W`) specs, each
//! with the canonical string schedlab prints for it. Every one still parses to exactly
//! that string, which parses back to itself.

use schedlab_core::PolicySpec;
use schedlab_workloads::WorkloadSpec;

#[test]
fn canonical_specs_keep_their_bytes() {
    let table = include_str!("data/canonical-specs.tsv");
    let mut n = 0;
    for line in table.lines() {
        let mut f = line.split('\t');
        let (kind, spec, want) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
        let (got, again) = match kind {
            "P" => {
                let c = PolicySpec::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}")).canonical();
                (c.clone(), PolicySpec::parse(&c).unwrap().canonical())
            }
            _ => {
                let c = WorkloadSpec::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}")).canonical();
                (c.clone(), WorkloadSpec::parse(&c).unwrap().canonical())
            }
        };
        assert_eq!(got, want, "{spec}");
        assert_eq!(again, want, "{spec}: the canonical string parses back to itself");
        n += 1;
    }
    assert!(n > 1000, "{n} specs");
}
