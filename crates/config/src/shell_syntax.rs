//! Shell syntax in a command lab runs without a shell: found before any run, so that
//! `echo 1 | wc -l` is refused instead of timing `echo` with the arguments `1 | wc -l`.
//!
//! A command line is read as a POSIX shell reads it (XCU 2.2 quoting, 2.3 token recognition,
//! 2.6 expansions): single quotes keep everything, double quotes keep all but `$` and
//! backquotes, a backslash keeps the next character. `{NAME}` is lab's own placeholder, not
//! brace expansion.

use std::fmt;

/// The first piece of shell syntax found in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellSyntax {
    /// What was found, as a phrase: "a pipe `|`", "a redirection `>`", "a variable `$HOME`".
    pub what: String,
    /// Where: the byte offset in a command line, or the index of the word in an argv list.
    pub offset: usize,
}

impl fmt::Display for ShellSyntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)
    }
}

/// The first piece of syntax in `text` that only a shell would act on, if any.
pub fn in_text(text: &str) -> Option<ShellSyntax> {
    let scan = Scanner::scan(text);
    let first_word = scan.words.first().and_then(|w| {
        let what = first_word_syntax(&w.value, &text[w.start..])?;
        Some(ShellSyntax {
            what,
            offset: w.start,
        })
    });
    // On a tie the first word wins: it is found at its start, before what is inside it.
    first_word
        .into_iter()
        .chain(scan.found)
        .min_by_key(|s| s.offset)
}

/// The first word of an argv list that shows its author expected a shell to read the list: a
/// word that is a control or redirection operator, or a first word that is a shell builtin,
/// keyword or `NAME=value`. `$`, globs and braces are left alone: a program run without a
/// shell may well take `*` or `$x` as an argument.
pub fn in_argv(argv: &[String]) -> Option<ShellSyntax> {
    argv.iter().enumerate().find_map(|(i, word)| {
        let first = if i == 0 {
            first_word_syntax(word, word)
        } else {
            None
        };
        let what = first.or_else(|| operator_at(argv, i))?;
        Some(ShellSyntax { what, offset: i })
    })
}

/// `argv` as one command line for `sh -c`: operator words as they are, so the shell acts on
/// them, every other word quoted where a shell would otherwise change it.
pub fn as_shell_line(argv: &[String]) -> String {
    let words: Vec<String> = argv
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if operator_at(argv, i).is_some() || reads_as_itself(w) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    words.join(" ")
}

/// What word `i` of `argv` is when it is a control or redirection operator that its program
/// would not take as an argument of its own.
fn operator_at(argv: &[String], i: usize) -> Option<String> {
    let word = argv[i].as_str();
    // `expr` and `test` take `|`, `&`, `<` and `>` as arguments; find's `-exec` ends at `;`.
    let program = argv[0].rsplit('/').next().unwrap_or(&argv[0]);
    let own_operators = ["expr", "test", "["].contains(&program);
    let ends_exec = word == ";" && argv[..i].iter().any(|w| FIND_EXEC.contains(&w.as_str()));
    if own_operators || ends_exec {
        return None;
    }
    operator_word(word)
}

/// find's actions that end at a `;` word of their own.
const FIND_EXEC: [&str; 4] = ["-exec", "-execdir", "-ok", "-okdir"];

/// Reserved words that open a compound command or change how one runs (XCU 2.4, and bash's).
const KEYWORDS: [&str; 11] = [
    "!", "{", "[[", "case", "for", "function", "if", "select", "time", "until", "while",
];

/// Builtins with no program of the same name that would do the same: they change the shell
/// itself (its directory, variables, limits, options) or run text as shell code.
const BUILTINS: [&str; 21] = [
    ".", "alias", "cd", "declare", "eval", "exec", "exit", "export", "local", "popd", "pushd",
    "readonly", "return", "set", "shopt", "source", "trap", "ulimit", "umask", "unalias", "unset",
];

/// A first word a shell acts on itself: a keyword, a builtin, or `NAME=value` (an assignment
/// for the command that follows). `value` is the word as the shell reads it, `raw` the text
/// it starts (an assignment's name is never quoted).
fn first_word_syntax(value: &str, raw: &str) -> Option<String> {
    if KEYWORDS.contains(&value) {
        return Some(format!("the shell keyword `{value}`"));
    }
    if BUILTINS.contains(&value) {
        return Some(format!("the shell builtin `{value}`"));
    }
    let name_len = raw
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(raw.len());
    let assignment = name_len > 0
        && !raw.starts_with(|c: char| c.is_ascii_digit())
        && raw[name_len..].starts_with('=');
    assignment.then(|| format!("a variable assignment `{value}`"))
}

/// What an argv word is when it is a control operator or starts with a redirection.
fn operator_word(word: &str) -> Option<String> {
    if let Some(what) = control_operator(word) {
        return Some(what);
    }
    let digits = word.len() - word.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let op = redirection(&word[digits..])?;
    Some(format!("a redirection `{}`", &word[..digits + op.len()]))
}

/// The phrase for a control operator.
fn control_operator(op: &str) -> Option<String> {
    let what = match op {
        "|" | "|&" => format!("a pipe `{op}`"),
        "||" | "&&" => format!("`{op}`"),
        "&" => "a background `&`".to_string(),
        ";" | ";;" => format!("a command separator `{op}`"),
        _ => return None,
    };
    Some(what)
}

/// The redirection operator `s` starts with (`>`, `>>`, `>&1`, `<<<`, `&>`…), if any.
fn redirection(s: &str) -> Option<&str> {
    let bytes = s.as_bytes();
    let mut len = match bytes {
        [b'&', b'>', b'>', ..] => 3,
        [b'&', b'>', ..] => 2,
        [b'<', b'<', b'<', ..] => 3,
        [b'<', b'<', b'-', ..] => 3,
        [b'>' | b'<', b'>' | b'&' | b'|', ..] | [b'<', b'<', ..] => 2,
        [b'>' | b'<', ..] => 1,
        _ => return None,
    };
    if bytes[len - 1] == b'&' {
        len += bytes[len..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if len < bytes.len() && bytes[len] == b'-' && bytes[len - 1] == b'&' {
            len += 1;
        }
    }
    Some(&s[..len])
}

/// True when a shell reads `word` back as one word, exactly itself, with nothing expanded.
fn reads_as_itself(word: &str) -> bool {
    let scan = Scanner::scan(word);
    scan.found.is_empty()
        && matches!(&scan.words[..], [w] if w.value == word && w.start == 0 && !w.quoted)
}

/// A word of a command line as the shell reads it, quotes removed.
struct Word {
    start: usize,
    value: String,
    quoted: bool,
}

/// One pass over a command line, collecting its words and every piece of shell syntax.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
    words: Vec<Word>,
    word: Option<Word>,
    found: Vec<ShellSyntax>,
    /// An unquoted line break after a word: a second command if another word follows.
    line_break: Option<usize>,
}

impl<'a> Scanner<'a> {
    fn scan(text: &'a str) -> Self {
        let mut s = Scanner {
            text,
            at: 0,
            words: Vec::new(),
            word: None,
            found: Vec::new(),
            line_break: None,
        };
        while let Some(c) = s.peek(0) {
            s.step(c);
        }
        s.end_word();
        s
    }

    /// Reads what starts at `self.at`, the character `c`, outside quotes.
    fn step(&mut self, c: char) {
        let at = self.at;
        match c {
            ' ' | '\t' | '\n' => {
                self.end_word();
                if c == '\n' && !self.words.is_empty() {
                    self.line_break.get_or_insert(at);
                }
                self.at += 1;
                return;
            }
            '#' if self.word.is_none() => {
                let text = self.text;
                let rest = &text[at..];
                self.at += rest.find('\n').unwrap_or(rest.len());
                return;
            }
            '\\' => return self.backslash(false),
            '\'' => return self.single_quoted(),
            '"' => return self.double_quoted(),
            '|' | '&' | ';' | '<' | '>' | '(' | ')' => return self.operator(c),
            '$' | '`' => self.expansion(c, false),
            '*' | '?' => self.note(at, format!("a glob `{c}`")),
            '[' if self.closes_in_word(']') => self.note(at, "a glob `[…]`"),
            '~' if self.word.is_none() => self.note(at, "a home directory `~`"),
            '{' => self.brace(),
            _ => {}
        }
        self.push(c);
        self.at += c.len_utf8();
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.text[self.at..].chars().nth(ahead)
    }

    fn note(&mut self, offset: usize, what: impl Into<String>) {
        let what = what.into();
        self.found.push(ShellSyntax { what, offset });
    }

    /// The word being read, starting one here if none is.
    fn word(&mut self) -> &mut Word {
        if self.word.is_none()
            && let Some(at) = self.line_break.take()
        {
            self.note(at, "a line break (a second command)");
        }
        let start = self.at;
        self.word.get_or_insert_with(|| Word {
            start,
            value: String::new(),
            quoted: false,
        })
    }

    fn push(&mut self, c: char) {
        self.word().value.push(c);
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            self.words.push(word);
        }
    }

    /// A backslash: the next character is kept as it is (inside double quotes only `$`, a
    /// backquote, `"`, `\` and a line break); a backslash before a line break joins lines.
    fn backslash(&mut self, in_double_quotes: bool) {
        self.word().quoted = true;
        self.at += 1;
        match self.peek(0) {
            None => self.push('\\'),
            Some('\n') => self.at += 1,
            Some(c) => {
                if in_double_quotes && !matches!(c, '$' | '`' | '"' | '\\') {
                    self.push('\\');
                }
                self.push(c);
                self.at += c.len_utf8();
            }
        }
    }

    /// `'…'`: everything up to the next single quote is kept as it is.
    fn single_quoted(&mut self) {
        self.word().quoted = true;
        let text = self.text;
        let rest = &text[self.at + 1..];
        let len = rest.find('\'').unwrap_or(rest.len());
        self.word().value.push_str(&rest[..len]);
        self.at += 1 + len + usize::from(len < rest.len());
    }

    /// `"…"`: kept as it is but for `$` and backquotes, which the shell expands.
    fn double_quoted(&mut self) {
        self.word().quoted = true;
        self.at += 1;
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.at += 1;
                    return;
                }
                '\\' => {
                    self.backslash(true);
                    continue;
                }
                '$' | '`' => self.expansion(c, true),
                _ => {}
            }
            self.push(c);
            self.at += c.len_utf8();
        }
    }

    /// An operator outside quotes: it ends the word being read.
    fn operator(&mut self, c: char) {
        let (text, start) = (self.text, self.at);
        let rest = &text[start..];
        let Some(op) = redirection(rest) else {
            let (what, len) = operator_phrase(rest, c);
            self.end_word();
            self.note(start, what);
            self.at += len;
            return;
        };
        // A file descriptor number before a redirection (`2>`) is part of it, not a word.
        let fd = self
            .word
            .as_ref()
            .filter(|w| !w.quoted && w.value.bytes().all(|b| b.is_ascii_digit()))
            .map(|w| w.start);
        let offset = match fd {
            Some(digits) => {
                self.word = None;
                digits
            }
            None => {
                self.end_word();
                start
            }
        };
        self.note(
            offset,
            format!("a redirection `{}{op}`", &text[offset..start]),
        );
        self.at += op.len();
    }

    /// `$…` or a backquote, outside single quotes.
    fn expansion(&mut self, c: char, in_double_quotes: bool) {
        let at = self.at;
        let what = if c == '`' {
            Some("a command substitution `` `…` ``".to_string())
        } else {
            dollar_phrase(&self.text[at + 1..], in_double_quotes)
        };
        if let Some(what) = what {
            self.note(at, what);
        }
    }

    /// Whether `close` comes later in the same unquoted word.
    fn closes_in_word(&self, close: char) -> bool {
        self.text[self.at + 1..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !"|&;<>()'\"".contains(*c))
            .any(|c| c == close)
    }

    /// `{a,b}` or `{1..3}` within a word is brace expansion; `{NAME}` is lab's placeholder.
    fn brace(&mut self) {
        let text = self.text;
        let rest = &text[self.at..];
        let mut depth = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                c if c.is_whitespace() || "|&;<>()'\"\\".contains(c) => return,
                _ => {}
            }
            if depth == 0 {
                let inner = &rest[1..i];
                if is_brace_expansion(inner) {
                    let at = self.at;
                    self.note(at, format!("a brace expansion `{}`", &rest[..=i]));
                }
                return;
            }
        }
    }
}

/// The phrase and length of the control operator or parenthesis `rest` starts with.
fn operator_phrase(rest: &str, c: char) -> (String, usize) {
    let two = rest.get(..2).unwrap_or("");
    if let Some(what) = control_operator(two) {
        return (what, 2);
    }
    match c {
        '(' => ("a subshell `(…)`".to_string(), 1),
        ')' => ("a closing parenthesis `)`".to_string(), 1),
        _ => (control_operator(&rest[..1]).unwrap_or_default(), 1),
    }
}

/// What a `$` followed by `rest` expands, if anything.
fn dollar_phrase(rest: &str, in_double_quotes: bool) -> Option<String> {
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let c = rest.chars().next()?;
    let what = match c {
        '(' if rest.starts_with("((") => "an arithmetic expansion `$((…))`".to_string(),
        '(' => "a command substitution `$(…)`".to_string(),
        '{' => {
            let inner = rest[1..].split('}').next().unwrap_or("");
            format!("a variable `${{{inner}}}`")
        }
        '\'' if !in_double_quotes => "a `$'…'` string".to_string(),
        c if c.is_ascii_digit() || "?#@*$!-".contains(c) => format!("a variable `${c}`"),
        _ if name_len > 0 => format!("a variable `${}`", &rest[..name_len]),
        _ => return None,
    };
    Some(what)
}

/// The text between braces is a brace expansion when it holds a comma outside nested braces,
/// or is a sequence `a..b`.
fn is_brace_expansion(inner: &str) -> bool {
    let mut depth = 0;
    let comma = inner.chars().any(|c| {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        c == ',' && depth == 0
    });
    let sequence = inner.split_once("..").is_some_and(|(a, b)| {
        let b = b.split("..").next().unwrap_or("");
        !a.is_empty() && !b.is_empty() && !a.contains('{') && !b.contains('{')
    });
    comma || sequence
}

/// An argv shown as a POSIX shell would need it typed, quoting elements that need it. Not
/// `shlex::try_join`: it also quotes `=`, `,`, `%` and every brace, which no shell needs
/// quoted, so `--size=64` would read `'--size=64'` and a variant's `--threads={threads}`
/// `'--threads={threads}'` in every chapter. A brace expansion (`a{1,2}`, `{1..3}`, which
/// bash makes several words of) is quoted.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && !(a.contains('{') && (a.contains(',') || a.contains("..")))
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=./:,{}@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[path = "shell_syntax_tests.rs"]
mod tests;
