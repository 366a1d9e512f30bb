//! Notes compiled for rendering: the author's template checked for what notes may not do,
//! its loops budgeted, and lab's functions and filters registered over the session's data.

use super::budget::{Budget, LOOP_STEP};
use super::location::{error_at, locate};
use super::{BUDGETED, NotesData, TEMPLATE, filters, places, references, source};
use anyhow::Result;
use std::path::Path;
use std::sync::Arc;
use tera::{Kwargs, State, Tera, TeraResult, Value};

/// The author's template and the budgeted one, with lab's functions and filters; an error for
/// a syntax mistake or a value where no escaping helps.
pub(super) fn compile(
    source: &str,
    pieces: &[source::Piece],
    budgeted: &str,
    path: &Path,
    data: &Arc<NotesData>,
    budget: &Arc<Budget>,
) -> Result<Tera> {
    if let Some(at) = first_component(pieces) {
        let at = source::position(source, at);
        return Err(error_at(path, Some(at), COMPONENTS_REFUSED));
    }
    let mut tera = Tera::new();
    register(&mut tera, data, budget);
    // The author's literal text passes through as written; every value an expression inserts
    // is escaped: what runs and commands printed where it enters the context, the rest for
    // Markdown by the functions below and for HTML by Tera's autoescape.
    tera.autoescape_on([".md"]);
    tera.add_raw_template(TEMPLATE, source)
        .map_err(|e| locate(&e, path, source))?;
    if let Some(refusal) = places::first_unescapable(source, pieces) {
        let at = source::position(source, refusal.at);
        return Err(error_at(path, Some(at), &refusal.why));
    }
    if let Some(at) = references::first_unquoted_ratio(source, pieces) {
        let at = source::position(source, at);
        return Err(error_at(path, Some(at), references::UNQUOTED_RATIO));
    }
    tera.add_raw_template(BUDGETED, budgeted)
        .map_err(|e| locate(&e, path, source))?;
    Ok(tera)
}

/// Why notes may not define a component, and what they may use instead.
const COMPONENTS_REFUSED: &str = "notes do not define components ({% component %}): write the text where it goes, or repeat it with {% for %}; notes support {{ cell(...) }}, {{ ratio(...) }}, {{ check(...) }}, {{ chart(...) }}, {{ fig(...) }}, {{ table(...) }}, {{ cite(...) }}, {% if %}, {% for %}, {% set %} and filters";

/// Where the first `{% component %}` of the notes starts, if any.
fn first_component(pieces: &[source::Piece]) -> Option<usize> {
    pieces.iter().find_map(|piece| match piece {
        source::Piece::Statement { range, keyword } if keyword == "component" => Some(range.start),
        _ => None,
    })
}

fn register(tera: &mut Tera, data: &Arc<NotesData>, budget: &Arc<Budget>) {
    let b = Arc::clone(budget);
    tera.register_function(
        LOOP_STEP,
        move |kw: Kwargs, _: &State| -> TeraResult<Value> { b.step(kw.must_get("at")?) },
    );
    let functions: [(&str, NotesFunction); 7] = [
        ("cell", NotesData::cell_value),
        ("ratio", NotesData::ratio_value),
        ("check", NotesData::check_value),
        ("chart", NotesData::chart_value),
        ("fig", NotesData::figure_link),
        ("table", NotesData::table_link),
        ("cite", NotesData::citation),
    ];
    for (name, function) in functions {
        let (d, b) = (Arc::clone(data), Arc::clone(budget));
        tera.register_function(name, move |kw: Kwargs, _: &State| -> TeraResult<Value> {
            d.last_statistic.forget();
            b.uncounted(|| function(&d, &kw))
        });
    }
    filters::register(tera, &data.last_statistic);
}

/// One of the functions notes call, looking up the session's data.
type NotesFunction = fn(&NotesData, &Kwargs) -> TeraResult<Value>;
