//! Whether the nodes of a cluster session were alike: runs measured on machines with another
//! CPU model, kernel, frequency governor or CPU count are not one population, and the reader
//! must be told before reading a cell that pools them.

use lab_store::{Host, Manifest};

/// The facts of a node's machine that change what a benchmark measures, by name.
fn fingerprint(host: &Host) -> [(&'static str, String); 4] {
    let known = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    [
        ("CPU model", known(&host.cpu_model)),
        ("kernel", known(&host.kernel)),
        ("governor", known(&host.governor)),
        ("logical CPUs", host.logical_cpus.to_string()),
    ]
}

/// One line per fact in which the session's nodes differ, naming each node's value:
/// "kernel: n1 6.1.0-18, n2 6.1.0-21". Empty for a session on one node or on this machine.
pub fn differences(manifest: &Manifest) -> Vec<String> {
    let Some(cluster) = &manifest.cluster else {
        return Vec::new();
    };
    if cluster.nodes.len() < 2 {
        return Vec::new();
    }
    let prints: Vec<(&str, [(&str, String); 4])> = cluster
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), fingerprint(&n.host)))
        .collect();
    (0..4)
        .filter(|&i| prints.iter().any(|(_, p)| p[i].1 != prints[0].1[i].1))
        .map(|i| {
            format!(
                "{}: {}",
                prints[0].1[i].0,
                prints
                    .iter()
                    .map(|(name, p)| format!("{name} {}", p[i].1))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect()
}

/// The warning a report shows when the nodes differ, or `None` when they are alike.
pub fn warning(manifest: &Manifest) -> Option<String> {
    let found = differences(manifest);
    let nodes = manifest.cluster.as_ref().map_or(0, |c| c.nodes.len());
    (!found.is_empty()).then(|| {
        format!(
            "the runs came from {nodes} nodes that differ ({}): a cell that pools their runs mixes machines; compare the per-node medians before trusting its interval",
            found.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_store::{Cluster, Node};

    fn host(cpu: &str, kernel: &str, governor: Option<&str>) -> Host {
        Host {
            name: "h".into(),
            cpu_model: Some(cpu.into()),
            logical_cpus: 8,
            allowed_cpus: None,
            governor: governor.map(str::to_string),
            turbo: None,
            kernel: Some(kernel.into()),
            memory_total: None,
            clocksource: None,
        }
    }

    fn manifest(hosts: Vec<(&str, Host)>) -> Manifest {
        let text = include_str!("../../../store/tests/data/manifest.json");
        let mut m = Manifest::from_json(text.as_bytes()).expect("manifest");
        m.cluster = Some(Cluster {
            engine: "slurm".into(),
            jobs: vec!["7".into()],
            nodes: hosts
                .into_iter()
                .map(|(name, host)| Node {
                    name: name.into(),
                    host,
                    calibration: None,
                })
                .collect(),
        });
        m
    }

    #[test]
    fn differing_nodes_are_named_fact_by_fact() {
        let m = manifest(vec![
            ("n1", host("EPYC 7763", "6.1.0-18", Some("performance"))),
            ("n2", host("EPYC 7763", "6.1.0-21", None)),
        ]);
        assert_eq!(
            differences(&m),
            vec![
                "kernel: n1 6.1.0-18, n2 6.1.0-21".to_string(),
                "governor: n1 performance, n2 unknown".to_string()
            ]
        );
        assert!(warning(&m).unwrap().starts_with(
            "the runs came from 2 nodes that differ (kernel: n1 6.1.0-18, n2 6.1.0-21; governor"
        ));
    }

    #[test]
    fn alike_nodes_and_single_nodes_warn_of_nothing() {
        let same = || host("EPYC 7763", "6.1.0-18", Some("performance"));
        assert!(warning(&manifest(vec![("n1", same()), ("n2", same())])).is_none());
        assert!(warning(&manifest(vec![("n1", host("x", "y", None))])).is_none());
    }
}
