//! The lab.toml `lab bench` writes, byte for byte: keys in the order a reader meets them,
//! parameters in the order they were typed.

use super::*;

fn command(label: &str, argv: &[&str]) -> BenchCommand {
    BenchCommand {
        label: label.to_string(),
        text: label.to_string(),
        argv: argv.iter().map(|w| w.to_string()).collect(),
    }
}

#[test]
fn parameters_keep_the_order_they_were_typed_in() {
    let commands = [
        command("work {zeta} {alpha}", &["sh", "-c", "work {zeta} {alpha}"]),
        command("rest", &["sh", "-c", "rest"]),
    ];
    let names = ["work".to_string(), "rest".to_string()];
    let params = [
        BenchParam {
            name: "zeta".into(),
            values: vec![toml::Value::Integer(1)],
        },
        BenchParam {
            name: "alpha".into(),
            values: vec![toml::Value::Float(0.5)],
        },
    ];
    let hooks = Hooks {
        prepare: Some(vec!["sync".into()]),
        ..Hooks::default()
    };
    let env = BTreeMap::from([("LANG".to_string(), "C".to_string())]);
    let plan = BenchPlan {
        commands: &commands,
        names: &names,
        params: &params,
        hooks: &[hooks.clone(), hooks],
        env: &[env.clone(), env],
        input: None,
        shell: Some(vec!["sh".into()]),
        shell_check: false,
        runs: Runs::Fixed(3),
        warmup: 1,
        seed: Some(7),
        timeout: Some("30s".into()),
        max_busy: None,
        budget: 20,
        ignore_failure: IgnoreFailure::Codes(vec![1]),
        threshold: 0.02,
        workdir: "../..".into(),
    };
    let variant = |name: &str, run: &str| {
        format!(
            "[[variant]]\nname = \"{name}\"\nlabel = \"{run}\"\nrun = [\"sh\", \"-c\", \"{run}\"]\nprepare = [\"sync\"]\nshell_check = false\n\n[variant.env]\nLANG = \"C\"\n\n"
        )
    };
    let expected = [
        "[experiment]\ntitle = \"work {zeta} {alpha} vs rest\"\n",
        "hypothesis = \"How long each command takes against the reference `work {zeta} {alpha}`: faster, slower, or the same within ±2.0%.\"\n",
        "repetitions = 3\nwarmup_runs = 1\nseed = 7\ntimeout = \"30s\"\nworkdir = \"../..\"\nignore_failure = [1]\nstart_up = [\"sh\", \"-c\", \"\"]\n\n",
        "[params]\nzeta = [1]\nalpha = [0.5]\n\n",
        &variant("work", "work {zeta} {alpha}"),
        &variant("rest", "rest"),
        "[[check]]\nname = \"rest against work {zeta} {alpha} (alpha=0.5, zeta=1)\"\nkind = \"agree\"\nclass = \"hypothesis\"\nmetric = \"wall_s\"\nmargin = \"2.0%\"\n\n",
        "[check.a]\nalpha = 0.5\nvariant = \"rest\"\nzeta = 1\n\n[check.b]\nalpha = 0.5\nvariant = \"work\"\nzeta = 1\n",
    ]
    .concat();
    assert_eq!(tables(&plan), expected);
}
