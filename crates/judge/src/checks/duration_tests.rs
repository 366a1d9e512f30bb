use super::*;

fn judgement(outside: Vec<(String, f64, f64)>, held_back: Vec<HeldBack>) -> DurationJudgement {
    DurationJudgement {
        spec_index: 0,
        tolerance: 0.025,
        metric: Some("elapsed_s".into()),
        judged: 10,
        outside,
        held_back,
    }
}

fn held(run: &str, measured: f64, waited: f64) -> HeldBack {
    HeldBack {
        run: run.into(),
        measured,
        requested: 0.5,
        waited,
    }
}

#[test]
fn runs_the_machine_held_back_withhold_the_verdict_and_say_why() {
    let j = judgement(
        Vec::new(),
        vec![held("r3", 0.513, 0.02), held("r7", 0.515, 0.021)],
    );
    let lasted = Lasted(&j);
    assert_eq!(lasted.verdict(), Verdict::Inconclusive);
    assert_eq!(lasted.runs(), vec!["r3", "r7"]);
    let words = Duration(&j).describe(&lasted);
    assert_eq!(
        words.reading,
        "machine busy: run r7 took 0.515 s for a 0.500 s request and waited 0.0210 s for a CPU others had, which could explain it; quiet the machine or add runs"
    );
    assert_eq!(
        words.evidence,
        "none of 10 runs outside ±2.5% by `elapsed_s`; 2 more past it by no more than they waited for a CPU"
    );
}

#[test]
fn one_run_outside_fails_the_check_whatever_the_machine_held_back() {
    let j = judgement(
        vec![("r5".into(), 0.6, 0.5)],
        vec![held("r7", 0.515, 0.021)],
    );
    let lasted = Lasted(&j);
    assert_eq!(lasted.verdict(), Verdict::Fail);
    assert_eq!(lasted.runs(), vec!["r5"]);
    let words = Duration(&j).describe(&lasted);
    assert_eq!(words.reading, "run r5 took 0.600 s for a 0.500 s request");
}

#[test]
fn with_every_run_inside_it_passes() {
    let j = judgement(Vec::new(), Vec::new());
    assert_eq!(Lasted(&j).verdict(), Verdict::Pass);
    assert_eq!(
        Duration(&j).describe(&Lasted(&j)).reading,
        "all 10 runs lasted what they asked for"
    );
}
