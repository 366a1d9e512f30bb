//! The session an import writes: its plan, one run row and log per repetition, and the
//! manifest naming the tool and every file with its SHA-256.

use super::*;
use lab_store::Exit;

/// Writes the session: plan, manifest, one run row per imported run with its values as samples
/// and as a JSON-lines log. Returns its folder.
pub(super) fn write_session(
    layout: &Layout,
    exp: &Experiment,
    machine: &Machine,
    metrics: &[ImportedMetric],
    opts: &ImportOptions,
) -> Result<PathBuf> {
    let imported = &machine.imported;
    let plan = plan_of(exp, imported);
    let started = store::now_unix_ms();
    let manifest = manifest(exp, machine, opts, plan.runs.len(), started)?;
    let dir = store::new_session_dir(&layout.data_dir(&exp.name), started);
    let sealed = Sealed::read(&exp.dir)?;
    let names = exp.params.iter().map(|p| p.name.clone()).collect();
    let mut session = SessionWriter::create(dir, &manifest, &plan, names, &sealed)?;
    let runs = imported.benchmarks.iter().flat_map(|b| b.runs.iter());
    for (planned, run) in plan.runs.iter().zip(runs) {
        let values: Vec<(&ImportedMetric, Vec<f64>)> =
            metrics.iter().map(|m| (m, m.values(run))).collect();
        let log = log_lines(&values);
        let packed = session.pack(&planned.id, &mut log.as_bytes(), &mut std::io::empty())?;
        let samples = samples_of(exp, &planned.id, &values);
        let exit = run.exit.clone().unwrap_or(Exit::Code(0));
        let mut row = run_row(planned, &manifest.started_utc, &log, exit);
        row.packed(&packed);
        session.append(planned, &row, &samples)?;
    }
    let mut finished = manifest;
    finished.end(true);
    session.finish(&finished)?;
    Ok(session.dir.clone())
}

/// A run's log: line `i` is one JSON object holding the `i`-th value of every metric that has
/// one, so that reading the log back gives each metric's values in order.
fn log_lines(values: &[(&ImportedMetric, Vec<f64>)]) -> String {
    let lines = values.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    (0..lines)
        .map(|i| {
            let fields: Vec<String> = values
                .iter()
                .filter_map(|(m, v)| v.get(i).map(|x| format!("{}: {x:e}", json_key(&m.name))))
                .collect();
            format!("{{{}}}\n", fields.join(", "))
        })
        .collect()
}

/// The sample rows of a run: the values of every metric the experiment reads from its log, by
/// the JSON key it reads them under (an existing experiment may declare fewer metrics).
fn samples_of(
    exp: &Experiment,
    run_id: &str,
    values: &[(&ImportedMetric, Vec<f64>)],
) -> Vec<SampleRow> {
    exp.metrics
        .iter()
        .filter_map(|m| match &m.extractor {
            lab_config::Extractor::Json(key) => values
                .iter()
                .find(|(i, _)| i.name == *key)
                .map(|(_, v)| (m, v)),
            _ => None,
        })
        .flat_map(|(metric, v)| {
            v.iter()
                .enumerate()
                .map(move |(iteration, value)| SampleRow {
                    run_id: run_id.into(),
                    metric: metric.name.as_str().into(),
                    iteration,
                    value: format!("{value:e}").into(),
                })
        })
        .collect()
}

/// A metric name as a quoted JSON key.
fn json_key(metric: &str) -> String {
    serde_json::to_string(metric).unwrap_or_default()
}

/// One planned run per imported run, in file order, numbered within its cell.
fn plan_of(exp: &Experiment, imported: &Imported) -> Plan {
    let mut per_cell: BTreeMap<(CellKey, bool), u32> = BTreeMap::new();
    let mut runs = Vec::new();
    for b in &imported.benchmarks {
        let variant = variant_of(exp, b).unwrap_or_default().to_string();
        let cell = CellKey::new(
            variant,
            std::sync::Arc::new(
                b.params
                    .iter()
                    .map(|(k, v)| (k.clone(), typed(v)))
                    .collect(),
            ),
        );
        for run in &b.runs {
            let repetition = per_cell.entry((cell.clone(), run.warmup)).or_insert(0);
            *repetition += 1;
            let position = runs.len() + 1;
            runs.push(PlannedRun {
                id: format!("r{position:04}"),
                position,
                cell: cell.clone(),
                repetition: *repetition,
                warmup: run.warmup,
                argv: Vec::new().into(),
                repeats: None,
                look: 1,
                env_padding: None,
                heap_shift: None,
            });
        }
    }
    Plan {
        order: lab_config::Order::Sequential,
        seed: exp.seed,
        runs,
    }
}

/// A run row for an imported run: what lab did not measure is left at zero or empty; its
/// exit is the file's, or an ordinary one where the file records none.
fn run_row(run: &PlannedRun, started_utc: &str, log: &str, exit: Exit) -> RunRow {
    // Nothing lab measured: the fields of a run that never started, with the exit recorded.
    let no_measurement = lab_exec::Measurement {
        exit,
        ..lab_exec::Measurement::spawn_failed(String::new(), 0)
    };
    let digest = format!("{:x}", Sha256::digest(log));
    RunRow {
        start_utc: started_utc.into(),
        busy_limit: None,
        ..lab_exec::run_row(run, &no_measurement, digest, 1.0)
    }
}

/// The session's record: the tool, its files and what they say about the machine.
fn manifest(
    exp: &Experiment,
    machine: &Machine,
    opts: &ImportOptions,
    planned_runs: usize,
    started: u64,
) -> Result<Manifest> {
    let imported = &machine.imported;
    let files = machine
        .files
        .iter()
        .map(|f| {
            let bytes = read_for_hash(f)?;
            Ok(ImportedFile {
                path: f.display().to_string(),
                sha256: format!("{:x}", Sha256::digest(&bytes)),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Manifest {
        profile: None,
        order: "imported".into(),
        load_before: String::new(),
        imported: Some(ImportRecord {
            tool: imported.format.tool().to_string(),
            version: imported.tool_version.clone(),
            files,
            context: imported.context.clone(),
            summary_only: imported.benchmarks.iter().any(|b| b.summary_only),
            machine: Some(machine.label.clone()),
            exit_codes: imported
                .benchmarks
                .iter()
                .all(|b| b.runs.iter().all(|r| r.exit.is_some())),
        }),
        ..Manifest::new(
            exp,
            &opts.command_line,
            planned_runs,
            recorded_host(&imported.context),
            started,
        )
    })
}

/// The bytes of an imported file, or of a criterion folder's sample.json, for its hash.
fn read_for_hash(path: &Path) -> Result<Vec<u8>> {
    let file = if path.is_dir() {
        [path.join("new/sample.json"), path.join("sample.json")]
            .into_iter()
            .find(|p| p.is_file())
            .unwrap_or_else(|| path.to_path_buf())
    } else {
        path.to_path_buf()
    };
    std::fs::read(&file)
        .map_err(|e| LabError::Other(anyhow::anyhow!("cannot read {}: {e}", file.display())))
}

/// The machine as the tool's files describe it (never this machine: lab did not measure).
fn recorded_host(context: &BTreeMap<String, String>) -> Host {
    let find = |keys: &[&str]| keys.iter().find_map(|k| context.get(*k).cloned());
    Host {
        name: find(&["host_name", "hostname"]).unwrap_or_else(|| "not recorded".into()),
        cpu_model: find(&["cpu_model_name", "cpu_model", "cpu"]),
        logical_cpus: find(&["num_cpus", "cpu_count"])
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
        allowed_cpus: find(&["cpu_affinity"]),
        governor: None,
        turbo: None,
        kernel: find(&["platform", "release"]),
        memory_total: None,
        clocksource: None,
    }
}
