use super::*;
use crate::rows::{COUNTER_NAMES, SampleRow};

/// The line `layout` writes for `row`.
fn line(layout: &mut RunLayout, row: &RunRow, values: &BTreeMap<String, ParamValue>) -> Vec<u8> {
    let mut out = Vec::new();
    layout.write_line(row, values, Overrides::default(), &mut out);
    out
}

/// The run row of `line` under `header`, read as a session is read.
fn read_back(header: &[String], line: &[u8]) -> Result<RunRow, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line);
    let mut record = csv::ByteRecord::new();
    assert!(reader.read_byte_record(&mut record).unwrap());
    RunReader::new(&csv::ByteRecord::from(header.to_vec())).read(&record)
}

/// `line` as the csv crate writes its fields: the bytes lab's own writer must give.
fn csv_line(line: &[u8]) -> Vec<u8> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line);
    let record = reader.byte_records().next().unwrap().unwrap();
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_byte_record(&record).unwrap();
    writer.into_inner().unwrap()
}

/// A row with a value in every kind of column, quoting needed in some.
fn tricky_row() -> RunRow {
    let mut row = RunRow {
        run_id: "r0007".into(),
        position: 7,
        variant: "with, comma".into(),
        repetition: 3,
        warmup: true,
        start_utc: "2026-12-04T10:00:00Z".into(),
        wall_ns: 123_456_789,
        exit_code: Some(-2),
        cpus: Some("0 1".into()),
        stdout_sha256: "cd".into(),
        busy_limit: Some(0.1),
        host_busy_ns: Some(0),
        samples: Some(2),
        stdout_offset: Some(40),
        stdout_bytes: Some(0),
        stderr_sha256: Some("ab \"quoted\"\nand a line\r".into()),
        wait_share: Some(0.25),
        env_padding: Some(12),
        heap_shift: Some(48),
        ..RunRow::default()
    };
    row.set_counter("cycles", 99);
    row.set_counters_multiplexed(Some("cycles".into()));
    row
}

#[test]
fn the_header_a_new_session_writes_is_the_one_sessions_have_always_had() {
    let fixed = "repetition,warmup,start_utc,wall_ns,boottime_ns,user_ns,sys_ns,max_rss_kib,voluntary_cs,involuntary_cs,exit_code,signal,spawn_error,timed_out,cpus,stdout_sha256,left_running,host_busy_ns,host_steal_ns,host_capacity_ns,psi_cpu_some_us,psi_cpu_own_us,busy_limit,throttle_events,samples,node,start_boottime_ns,overlapped,minor_faults,major_faults,block_in,block_out,counter_task_clock,counter_context_switches,counter_cpu_migrations,counter_page_faults,counter_instructions,counter_cycles,counter_cache_references,counter_cache_misses,counter_branch_misses,counter_branches,counter_callgrind_instructions,counters_multiplexed,stdout_offset,stdout_bytes,stderr_offset,stderr_bytes,stderr_sha256,wait_ns,wait_tasks,wait_share";
    let params = ["impl".to_string(), "threads".to_string()];
    assert_eq!(
        run_header(&params, false).join(","),
        format!("run_id,position,variant,impl,threads,{fixed}")
    );
    assert_eq!(
        run_header(&[], true).join(","),
        format!("run_id,position,variant,{fixed},env_padding,heap_shift")
    );
    assert_eq!(param_columns(&run_header(&params, true)), params);
    assert!(param_columns(&run_header(&[], false)).is_empty());
}

#[test]
fn every_run_row_written_reads_back_as_it_was() {
    let tricky = tricky_row();
    let signalled = RunRow {
        signal: Some(9),
        exit_code: None,
        ..tricky.clone()
    };
    let unstarted = RunRow {
        spawn_error: Some("cannot start `x`: no such file".into()),
        ..RunRow::default()
    };
    let values = BTreeMap::from([
        ("threads".to_string(), ParamValue::Int(4)),
        ("impl".to_string(), ParamValue::Text("a \"b\"".into())),
    ]);
    let header = run_header(&["impl".to_string(), "threads".to_string()], true);
    let mut layout = RunLayout::new(header.clone());
    for row in [&tricky, &signalled, &unstarted] {
        let written = line(&mut layout, row, &values);
        assert_eq!(written, csv_line(&written), "the csv crate's bytes");
        assert_eq!(read_back(&header, &written).as_ref(), Ok(row));
    }
    let written = String::from_utf8(line(&mut layout, &tricky, &values)).unwrap();
    assert_eq!(written.as_bytes(), csv_line(written.as_bytes()));
    assert!(
        written.starts_with("r0007,7,\"with, comma\",\"a \"\"b\"\"\",4,3,true,"),
        "{written}"
    );
    assert!(written.ends_with(",0.25,12,48\n"), "{written}");
}

#[test]
fn a_row_under_an_older_header_keeps_the_columns_it_has() {
    // An older session's header: fewer columns, one this lab does not know.
    let header = [
        "run_id",
        "position",
        "variant",
        "repetition",
        "warmup",
        "start_utc",
        "wall_ns",
        "boottime_ns",
        "user_ns",
        "sys_ns",
        "max_rss_kib",
        "voluntary_cs",
        "involuntary_cs",
        "exit_code",
        "retired",
        "timed_out",
        "stdout_sha256",
    ]
    .map(String::from)
    .to_vec();
    let mut layout = RunLayout::new(header.clone());
    let tricky = tricky_row();
    let written = line(&mut layout, &tricky, &BTreeMap::new());
    assert_eq!(written, csv_line(&written), "the csv crate's bytes");
    let read = read_back(&header, &written).unwrap();
    assert_eq!(
        (
            &read.variant,
            read.wall_ns,
            read.exit_code,
            &read.stdout_sha256
        ),
        (
            &tricky.variant,
            tricky.wall_ns,
            tricky.exit_code,
            &tricky.stdout_sha256
        )
    );
    assert_eq!(
        (&read.cpus, read.samples, read.counters.is_none()),
        (&None, None, true),
        "the columns the header lacks read as empty"
    );
}

#[test]
fn a_row_lacking_a_column_every_session_has_is_damaged() {
    let header = run_header(&[], false);
    let mut layout = RunLayout::new(header.clone());
    let written = line(&mut layout, &tricky_row(), &BTreeMap::new());
    let without_wall: Vec<String> = header
        .iter()
        .map(|h| {
            if h == "wall_ns" {
                "wall".into()
            } else {
                h.clone()
            }
        })
        .collect();
    assert_eq!(
        read_back(&without_wall, &written),
        Err("the row has no column `wall_ns`".into())
    );
    let cut = &written[..written.iter().position(|&b| b == b',').unwrap()];
    assert_eq!(
        read_back(&header, cut),
        Err("the row has no column `position`".into())
    );
    let mut bad = written.clone();
    bad.splice(0..0, b"r1,x".iter().copied());
    let bad = String::from_utf8(bad)
        .unwrap()
        .replacen("r1,xr0007,7,", "r1,x,", 1);
    assert_eq!(
        read_back(&header, bad.as_bytes()),
        Err("column `position`: invalid digit found in string: \"x\"".into())
    );
}

#[test]
fn the_sessions_count_of_values_and_its_node_take_the_place_of_the_rows_own() {
    let header = run_header(&[], false);
    let mut layout = RunLayout::new(header.clone());
    let mut written = Vec::new();
    let overrides = Overrides {
        samples: Some(5),
        node: Some("n2"),
    };
    layout.write_line(
        &RunRow::default(),
        &BTreeMap::new(),
        overrides,
        &mut written,
    );
    let row = read_back(&header, &written).unwrap();
    assert_eq!((row.samples, row.node.as_deref()), (Some(5), Some("n2")));
}

#[test]
fn runs_csv_has_a_column_for_each_perf_counter() {
    let counters: Vec<String> = RUN_COLUMNS
        .iter()
        .filter_map(|c| c.name.strip_prefix("counter_"))
        .map(|name| name.replace('_', "-"))
        .collect();
    assert_eq!(counters, COUNTER_NAMES);
    let names: std::collections::BTreeSet<&str> = RUN_COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(
        names.len(),
        RUN_COLUMNS.len(),
        "no column is declared twice"
    );
}

#[test]
fn every_sample_row_written_reads_back_as_it_was_under_the_declared_header() {
    let rows = [
        SampleRow {
            run_id: "r0001".into(),
            metric: "score".into(),
            iteration: 0,
            value: "1.5".into(),
        },
        SampleRow {
            run_id: "r0001".into(),
            metric: "note".into(),
            iteration: 1,
            value: "a, \"quoted\" value".into(),
        },
    ];
    // The serde fields write the header the columns' table declares.
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in &rows {
        writer.serialize(row).unwrap();
    }
    let text = writer.into_inner().unwrap();
    let header = text.split(|&b| b == b'\n').next().unwrap();
    assert_eq!(header, sample_header().join(",").as_bytes());
    let read: Vec<SampleRow> = csv::Reader::from_reader(text.as_slice())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(read, rows);
}
