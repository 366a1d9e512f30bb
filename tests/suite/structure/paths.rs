//! The `crate::` and `super::` paths of Rust source, as the structure test reads them: the
//! source is cut into the tokens that matter for paths (words, `::` and brackets; comments,
//! strings and characters skipped), `#[cfg(test)]` items are passed over, and each path is
//! resolved against the module it is written in, inline modules included.

/// A token of Rust source that matters for its paths.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    /// `::`
    Sep,
    /// One of `{ } ( ) [ ] ; , # *`.
    Mark(char),
}

/// The index just past the string literal whose opening quote is at `i` (escapes honoured).
fn after_string(chars: &[char], mut i: usize) -> usize {
    i += 1;
    while i < chars.len() && chars[i] != '"' {
        i += if chars[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// The index just past a raw string starting at `i` (`r"…"`, `br#"…"#`), if one starts there.
fn after_raw_string(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i + usize::from(chars[i] == 'b');
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    let closing: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    let end = (j + 1..chars.len()).find(|&k| chars[k..].starts_with(&closing))?;
    Some(end + closing.len())
}

/// The index just past the comment at `i` (`//` to the end of its line, or a nested `/* */`).
fn after_comment(chars: &[char], i: usize) -> usize {
    if chars[i + 1] == '/' {
        return (i..chars.len())
            .find(|&k| chars[k] == '\n')
            .unwrap_or(chars.len());
    }
    let (mut depth, mut k) = (0, i);
    while k + 1 < chars.len() {
        match (chars[k], chars[k + 1]) {
            ('/', '*') => (depth, k) = (depth + 1, k + 2),
            ('*', '/') if depth == 1 => return k + 2,
            ('*', '/') => (depth, k) = (depth - 1, k + 2),
            _ => k += 1,
        }
    }
    chars.len()
}

/// The index just past a character literal at `i`, or just past the `'` of a lifetime.
fn after_quote(chars: &[char], i: usize) -> usize {
    if chars.get(i + 1) == Some(&'\\') {
        return (i + 3..chars.len())
            .find(|&k| chars[k] == '\'')
            .map_or(chars.len(), |k| k + 1);
    }
    if chars.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    i + 1
}

/// Where the literal, comment or word starting at `i` ends, and the word it is, if one.
fn skip_at(chars: &[char], i: usize) -> (usize, Option<String>) {
    let c = chars[i];
    let next = chars.get(i + 1).copied().unwrap_or(' ');
    if c == '/' && (next == '/' || next == '*') {
        return (after_comment(chars, i), None);
    }
    if c == '"' || (c == 'b' && next == '"') {
        return (after_string(chars, i + usize::from(c == 'b')), None);
    }
    if c == '\'' || (c == 'b' && next == '\'') {
        return (after_quote(chars, i + usize::from(c == 'b')), None);
    }
    if let Some(end) = (c == 'r' || c == 'b')
        .then(|| after_raw_string(chars, i))
        .flatten()
    {
        return (end, None);
    }
    let end = (i..chars.len())
        .find(|&k| !(chars[k].is_alphanumeric() || chars[k] == '_'))
        .unwrap_or(chars.len());
    (end, Some(chars[i..end].iter().collect()))
}

/// The tokens of `text`, each with its line; comments, strings and characters are skipped.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    while i < chars.len() {
        let c = chars[i];
        let end = if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Tok::Sep, line));
            i + 2
        } else if "{}()[];,#*".contains(c) {
            out.push((Tok::Mark(c), line));
            i + 1
        } else if c.is_alphanumeric() || "_\"'/".contains(c) {
            let (end, word) = skip_at(&chars, i);
            if let Some(word) = word.filter(|w| !w.is_empty()) {
                out.push((Tok::Word(word), line));
            }
            end.max(i + 1)
        } else {
            i + 1
        };
        line += chars[i..end.min(chars.len())]
            .iter()
            .filter(|&&c| c == '\n')
            .count();
        i = end;
    }
    out
}

/// Whether the tokens at `i` are `#[cfg(test)]`.
fn is_cfg_test(toks: &[(Tok, usize)], i: usize) -> bool {
    let word = |w: &str| Tok::Word(w.to_string());
    let pattern = [
        Tok::Mark('#'),
        Tok::Mark('['),
        word("cfg"),
        Tok::Mark('('),
        word("test"),
        Tok::Mark(')'),
        Tok::Mark(']'),
    ];
    toks.len() >= i + pattern.len() && toks[i..i + pattern.len()].iter().map(|t| &t.0).eq(&pattern)
}

/// The index after the item at `i`: its attributes, then up to its `;`, its closing `}`, or
/// the `,` after a field or an arm; never past the end of the block holding it.
fn after_item(toks: &[(Tok, usize)], mut i: usize) -> usize {
    let mut nesting = 0i32;
    while i < toks.len() {
        match toks[i].0 {
            Tok::Mark('{' | '(' | '[') => nesting += 1,
            Tok::Mark('}' | ')' | ']') if nesting == 0 => return i,
            Tok::Mark('}') if nesting == 1 => return i + 1,
            Tok::Mark('}' | ')' | ']') => nesting -= 1,
            Tok::Mark(';' | ',') if nesting == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// The paths written from `i` on (`a::b`, `a::{b, c::d}`, `a::*`) as their words, and the
/// index after them.
fn paths_at(toks: &[(Tok, usize)], i: usize) -> (Vec<Vec<String>>, usize) {
    let Some((Tok::Word(first), _)) = toks.get(i) else {
        return (vec![Vec::new()], i + 1);
    };
    let mut words = vec![first.clone()];
    let mut j = i + 1;
    while toks.get(j).is_some_and(|t| t.0 == Tok::Sep) {
        match toks.get(j + 1).map(|t| &t.0) {
            Some(Tok::Word(w)) => words.push(w.clone()),
            Some(Tok::Mark('{')) => {
                let (items, end) = group_at(toks, j + 1);
                let all = items.into_iter().map(|item| [words.clone(), item].concat());
                return (all.collect(), end);
            }
            _ => return (vec![words], j + 2),
        }
        j += 2;
    }
    (vec![words], j)
}

/// The items of the `{ … }` group whose `{` is at `i`, and the index after its `}`.
fn group_at(toks: &[(Tok, usize)], i: usize) -> (Vec<Vec<String>>, usize) {
    let mut items = Vec::new();
    let mut j = i + 1;
    while j < toks.len() && toks[j].0 != Tok::Mark('}') {
        if toks[j].0 == Tok::Mark(',') {
            j += 1;
            continue;
        }
        let (paths, end) = paths_at(toks, j);
        items.extend(paths);
        // Past what follows the path (`as NAME`) to the next item.
        j = end;
        while j < toks.len() && !matches!(toks[j].0, Tok::Mark(',' | '}')) {
            j += 1;
        }
    }
    (items, j + 1)
}

/// The module path a path written in `module` names, from the crate root.
fn resolved(module: &[String], words: &[String]) -> Vec<String> {
    let mut base = if words.first().is_some_and(|w| w == "crate") {
        Vec::new()
    } else {
        module.to_vec()
    };
    for word in words {
        match word.as_str() {
            "crate" | "self" => {}
            "super" => {
                base.pop();
            }
            _ => base.push(word.clone()),
        }
    }
    base
}

/// The `crate::` and `super::` paths of the code of a file of `module`, outside
/// `#[cfg(test)]` items, each as the module path it names with its line.
pub(super) fn references(text: &str, module: &[String]) -> Vec<(Vec<String>, usize)> {
    let toks = tokens(text);
    let (mut found, mut i, mut depth) = (Vec::new(), 0, 0);
    // Inline modules (`mod NAME { … }`) open, with the depth inside each.
    let mut inline: Vec<(usize, String)> = Vec::new();
    while i < toks.len() {
        let word = |k: usize| match toks.get(k) {
            Some((Tok::Word(w), _)) => Some(w.as_str()),
            _ => None,
        };
        if is_cfg_test(&toks, i) {
            i = after_item(&toks, i + 7);
            continue;
        }
        match &toks[i].0 {
            Tok::Word(w)
                if w == "mod" && toks.get(i + 2).is_some_and(|t| t.0 == Tok::Mark('{')) =>
            {
                depth += 1;
                inline.push((depth, word(i + 1).unwrap_or_default().to_string()));
                i += 3;
                continue;
            }
            Tok::Mark('{') => depth += 1,
            Tok::Mark('}') => {
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Word(w)
                if (w == "crate" || w == "super")
                    && toks.get(i + 1).is_some_and(|t| t.0 == Tok::Sep)
                    && (i == 0 || toks[i - 1].0 != Tok::Sep) =>
            {
                let here: Vec<String> = module
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|m| m.1.clone()))
                    .collect();
                let (paths, end) = paths_at(&toks, i);
                found.extend(paths.iter().map(|p| (resolved(&here, p), toks[i].1)));
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}
