//! Two readings of a bench that its per-command blocks do not give: what a command shorter
//! than the timing floor was timed as (whole, process start-up included, as hyperfine times
//! a command it runs without a shell), and, for one command timed across parameter values,
//! each value against the fastest with the interval of the ratio.

use super::figures::Timed;
use crate::assess::Assessed;
use lab_config::format::{level, millis, significant};
use lab_config::template::substitute;
use lab_config::units::Nanos;

/// "true, false: each under 1.77 ms, …": the commands whose median is under the session's
/// timing floor, and how their times read. `None` when every command is longer.
pub(super) fn start_up_note(a: &Assessed, timed: &[Timed]) -> Option<String> {
    let c = a.session.manifest.calibration.as_ref()?;
    if let Some(cost) = &c.start_up {
        return Some(subtracted_note(cost, timed));
    }
    let floor = lab_judge::validity::automatic::timing_floor_ns(c);
    let mut short: Vec<&str> = timed
        .iter()
        .filter(|t| t.median.is_some_and(|m| m * 1e9 < floor as f64))
        .map(|t| t.command.as_str())
        .collect();
    short.dedup();
    if short.is_empty() {
        return None;
    }
    Some(format!(
        "{}: under {}, the shortest time this machine tells apart from starting a process, so each is timed whole, start-up included (as hyperfine times a command run without a shell): starting an empty program takes {} here (σ {}), most of their time, and the intervals above hold its noise",
        short.join(", "),
        millis(Nanos(floor)),
        millis(Nanos(c.spawn_median_ns)),
        millis(Nanos(
            lab_judge::validity::automatic::spawn_sigma_ns(c) as u64
        )),
    ))
}

/// "Times leave out starting sh -c '' (…)": what was taken out of each time, and the commands
/// whose own time that leaves within the error of what was taken out.
fn subtracted_note(cost: &lab_store::StartUpCost, timed: &[Timed]) -> String {
    let se = cost.standard_error_s();
    let sigma = 1.4826 * cost.mad_ns as f64;
    let mut note = format!(
        "Times leave out starting {} ({} here, σ {}, the median of {} starts at the session's start), as hyperfine leaves out its shell's start-up; each interval is widened by that median's error (standard error {})",
        lab_config::shell_syntax::shell_words(&cost.argv),
        millis(Nanos(cost.median_ns)),
        millis(Nanos(sigma as u64)),
        cost.samples,
        millis(Nanos((se * 1e9) as u64)),
    );
    let unresolved: Vec<&str> = timed
        .iter()
        .filter(|t| t.median.is_some_and(|m| m < 4.0 * se))
        .map(|t| t.command.as_str())
        .collect();
    if !unresolved.is_empty() {
        note.push_str(&format!(
            ". {}: its own time is within that error, so it cannot be told apart from nothing; time it without --shell (whole, start-up included), or give each run more work",
            unresolved.join(", ")
        ));
    }
    note
}

/// For one command timed at several parameter values: "sleep 0.1 is 2.96× [2.95, 2.97]
/// faster than sleep 0.3 (95% CI)", each value against the fastest, fastest first.
pub(super) fn across_values(a: &Assessed) -> Vec<String> {
    if a.experiment.variants.len() != 1 {
        return Vec::new();
    }
    let mut cells: Vec<&lab_judge::analysis::CellStats> = a
        .analysis
        .cells
        .iter()
        .filter(|c| c.metric == "wall_s" && c.median().is_some())
        .collect();
    if cells.len() < 2 {
        return Vec::new();
    }
    cells.sort_by(|x, y| {
        let m = |c: &lab_judge::analysis::CellStats| c.median().unwrap_or(f64::INFINITY);
        m(x).total_cmp(&m(y))
    });
    let (fastest, others) = cells.split_first().expect("two cells or more");
    let label = a.experiment.variants[0]
        .label
        .clone()
        .unwrap_or_else(|| a.experiment.variants[0].name.clone());
    let command = |c: &lab_judge::analysis::CellStats| substitute(&label, &c.cell.params);
    others
        .iter()
        .map(|other| {
            let stream = format!("across/{}", other.cell);
            match lab_judge::checks::ratio_of(other, fastest, a.analysis.resampling, &stream) {
                Ok((r, iv)) if iv.lo <= 1.0 => format!(
                    "{} and {}: not told apart ({}× [{}, {}], {} CI)",
                    command(fastest),
                    command(other),
                    significant(r, 4),
                    significant(iv.lo, 4),
                    significant(iv.hi, 4),
                    level(iv.level)
                ),
                Ok((r, iv)) => format!(
                    "{} is {}× [{}, {}] faster than {} ({} CI)",
                    command(fastest),
                    significant(r, 4),
                    significant(iv.lo, 4),
                    significant(iv.hi, 4),
                    command(other),
                    level(iv.level)
                ),
                Err(why) => format!("{} against {}: {why}", command(fastest), command(other)),
            }
        })
        .collect()
}
