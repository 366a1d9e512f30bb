//! What a shell would act on in a command line and in an argv list, and what it would not.

use super::*;

fn what(text: &str) -> Option<(String, usize)> {
    in_text(text).map(|s| (s.what, s.offset))
}

fn argv(words: &[&str]) -> Option<(String, usize)> {
    let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    in_argv(&words).map(|s| (s.what, s.offset))
}

fn found(what: &str, offset: usize) -> Option<(String, usize)> {
    Some((what.to_string(), offset))
}

#[test]
fn operators_outside_quotes_are_found_where_they_stand() {
    assert_eq!(what("echo 1 | wc -l"), found("a pipe `|`", 7));
    assert_eq!(what("echo 1|wc -l"), found("a pipe `|`", 6));
    assert_eq!(what("make || true"), found("`||`", 5));
    assert_eq!(what("make && ./run"), found("`&&`", 5));
    assert_eq!(what("sleep 1 &"), found("a background `&`", 8));
    assert_eq!(what("a; b"), found("a command separator `;`", 1));
    assert_eq!(what("prog < in.txt"), found("a redirection `<`", 5));
    assert_eq!(what("prog > out.txt"), found("a redirection `>`", 5));
    assert_eq!(what("prog >out.txt"), found("a redirection `>`", 5));
    assert_eq!(what("prog >> log"), found("a redirection `>>`", 5));
    assert_eq!(what("prog 2> /dev/null"), found("a redirection `2>`", 5));
    assert_eq!(what("prog 2>&1"), found("a redirection `2>&1`", 5));
    assert_eq!(what("prog &> all"), found("a redirection `&>`", 5));
    assert_eq!(what("cat <<< x"), found("a redirection `<<<`", 4));
    assert_eq!(what("(cd x && make)"), found("a subshell `(…)`", 0));
    assert_eq!(what("prog a)"), found("a closing parenthesis `)`", 6));
    assert_eq!(
        what("prog a\nprog b"),
        found("a line break (a second command)", 6)
    );
}

#[test]
fn expansions_are_found_outside_quotes_and_in_double_quotes() {
    assert_eq!(
        what("echo `date`"),
        found("a command substitution `` `…` ``", 5)
    );
    assert_eq!(
        what("echo $(date)"),
        found("a command substitution `$(…)`", 5)
    );
    assert_eq!(
        what("echo $((1+2))"),
        found("an arithmetic expansion `$((…))`", 5)
    );
    assert_eq!(what("ls $HOME"), found("a variable `$HOME`", 3));
    assert_eq!(what("ls ${HOME}/x"), found("a variable `${HOME}`", 3));
    assert_eq!(what("echo $1"), found("a variable `$1`", 5));
    assert_eq!(what("echo $?"), found("a variable `$?`", 5));
    assert_eq!(what("echo \"$HOME\""), found("a variable `$HOME`", 6));
    assert_eq!(
        what("echo \"x $(id)\""),
        found("a command substitution `$(…)`", 8)
    );
    assert_eq!(
        what("echo \"`id`\""),
        found("a command substitution `` `…` ``", 6)
    );
    assert_eq!(what("printf $'a\\tb'"), found("a `$'…'` string", 7));
}

#[test]
fn globs_tildes_and_brace_expansions_are_found_in_words() {
    assert_eq!(what("ls *.txt"), found("a glob `*`", 3));
    assert_eq!(what("ls file?.txt"), found("a glob `?`", 7));
    assert_eq!(what("ls [ab].txt"), found("a glob `[…]`", 3));
    assert_eq!(what("cat ~/notes"), found("a home directory `~`", 4));
    assert_eq!(what("cp f{,.bak}"), found("a brace expansion `{,.bak}`", 4));
    assert_eq!(what("echo {a,b}"), found("a brace expansion `{a,b}`", 5));
    assert_eq!(what("seq {1..5}"), found("a brace expansion `{1..5}`", 4));
}

#[test]
fn the_first_word_can_be_the_shell_s_own() {
    assert_eq!(what("cd build"), found("the shell builtin `cd`", 0));
    assert_eq!(what("  export X=1"), found("the shell builtin `export`", 2));
    assert_eq!(
        what("source env.sh"),
        found("the shell builtin `source`", 0)
    );
    assert_eq!(what(". env.sh"), found("the shell builtin `.`", 0));
    assert_eq!(what("for i in 1 2"), found("the shell keyword `for`", 0));
    assert_eq!(what("if true"), found("the shell keyword `if`", 0));
    assert_eq!(what("while true"), found("the shell keyword `while`", 0));
    assert_eq!(what("time prog"), found("the shell keyword `time`", 0));
    for builtin in ["exec", "set", "ulimit", "alias", "eval"] {
        let expected = format!("the shell builtin `{builtin}`");
        assert_eq!(what(&format!("{builtin} x")), found(&expected, 0));
    }
    // The assignment comes first, before the variable in its value.
    assert_eq!(
        what("FOO=1 prog"),
        found("a variable assignment `FOO=1`", 0)
    );
    assert_eq!(
        what("X=$HOME prog"),
        found("a variable assignment `X=$HOME`", 0)
    );
}

#[test]
fn what_a_shell_would_leave_alone_is_not_found() {
    for text in [
        "sort -k 2 'my file'",
        "awk '{print $1}' f",
        "grep 'a|b' f",
        "python3 -c 'import sys; print(1)'",
        "seq {count}",
        "prog --threads={threads} --size={size}",
        "echo \"a b\"",
        "ls -la",
        "printf '%s\\n' x",
        "echo \\|",
        "echo \\$HOME \\* \\;",
        "echo 'a && b > c'",
        "echo \"a | b; c > d * e\"",
        "echo \"it's\"",
        "echo 'say \"hi\"'",
        "echo $",
        "echo \"$\"",
        "prog --name=a~b x~",
        "find . -name x {}",
        "[ -f x ]",
        "prog a#b",
        "prog # a comment | not a pipe",
        "prog a\\\nb",
        "java -Xmx1g -cp build Bench --mode=fair",
        "",
        "   ",
        "café --été=1",
        "prog --x=1 PATH=y",
        "./FOO=1",
    ] {
        assert_eq!(in_text(text), None, "{text:?}");
    }
}

#[test]
fn argv_words_that_are_operators_are_found_by_their_index() {
    assert_eq!(
        argv(&["echo", "1", "|", "wc", "-l"]),
        found("a pipe `|`", 2)
    );
    assert_eq!(argv(&["make", "&&", "run"]), found("`&&`", 1));
    assert_eq!(argv(&["make", "||", "true"]), found("`||`", 1));
    assert_eq!(argv(&["a", ";", "b"]), found("a command separator `;`", 1));
    assert_eq!(argv(&["sleep", "1", "&"]), found("a background `&`", 2));
    assert_eq!(argv(&["prog", ">", "out"]), found("a redirection `>`", 1));
    assert_eq!(argv(&["prog", ">>", "out"]), found("a redirection `>>`", 1));
    assert_eq!(argv(&["prog", "<", "in"]), found("a redirection `<`", 1));
    assert_eq!(argv(&["prog", ">out.txt"]), found("a redirection `>`", 1));
    assert_eq!(argv(&["prog", "2>", "err"]), found("a redirection `2>`", 1));
    assert_eq!(argv(&["prog", "2>&1"]), found("a redirection `2>&1`", 1));
    assert_eq!(
        argv(&["prog", "2>/dev/null"]),
        found("a redirection `2>`", 1)
    );
    assert_eq!(argv(&["prog", "&>", "all"]), found("a redirection `&>`", 1));
    assert_eq!(argv(&["cd", "build"]), found("the shell builtin `cd`", 0));
    assert_eq!(
        argv(&["source", "x"]),
        found("the shell builtin `source`", 0)
    );
    assert_eq!(
        argv(&["time", "prog"]),
        found("the shell keyword `time`", 0)
    );
    assert_eq!(
        argv(&["FOO=1", "prog"]),
        found("a variable assignment `FOO=1`", 0)
    );
    assert_eq!(argv(&["find", ".", "|", "wc"]), found("a pipe `|`", 2));
}

#[test]
fn argv_words_a_program_takes_as_they_are_are_not_found() {
    for words in [
        &["sh", "-c", "echo 1 | wc -l"][..],
        &["bash", "-c", "cd x && make > log"],
        &["awk", "{print $1}", "f"],
        &["grep", "a|b", "f"],
        &["ls", "*.txt"],
        &["echo", "$HOME", "~", "{a,b}", "[x]"],
        &["prog", "--threads={threads}"],
        &["env", "FOO=1", "prog"],
        &["prog", "FOO=1"],
        &["find", ".", "-name", "*.rs", "-exec", "wc", "-l", "{}", ";"],
        &["find", ".", "(", "-name", "a", ")"],
        &["expr", "1", "|", "0"],
        &["test", "a", "<", "b"],
        &["/usr/bin/time", "-v", "prog"],
        &["prog", "->", "a=>b", "x>y"],
        &["prog", ""],
        &[],
    ] {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        assert_eq!(in_argv(&words), None, "{words:?}");
    }
}

#[test]
fn an_argv_reads_back_as_one_shell_line() {
    let line =
        |words: &[&str]| as_shell_line(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>());
    assert_eq!(line(&["echo", "1", "|", "wc", "-l"]), "echo 1 | wc -l");
    assert_eq!(
        line(&["prog", "--n={n}", "2>&1", ">out"]),
        "prog --n={n} 2>&1 >out"
    );
    assert_eq!(
        line(&["grep", "a b", "it's", "*", ""]),
        r"grep 'a b' 'it'\''s' '*' ''"
    );
    assert_eq!(
        line(&["echo", "{a,b}", "$x", "#c"]),
        "echo '{a,b}' '$x' '#c'"
    );
}

#[test]
fn the_phrase_is_what_was_found() {
    let found = in_text("a | b").unwrap();
    assert_eq!(found.to_string(), "a pipe `|`");
}

#[test]
fn file_descriptors_belong_to_their_redirection_only() {
    assert_eq!(what("prog a2>f"), found("a redirection `>`", 7));
    assert_eq!(what("prog 2|x"), found("a pipe `|`", 6));
    assert_eq!(what("prog '2'>f"), found("a redirection `>`", 8));
}

#[test]
fn unclosed_quotes_and_odd_text_never_panic() {
    let alphabet = [
        "a", " ", "\n", "'", "\"", "\\", "$", "{", "}", ",", "(", "|", "&", ">", "2", "[", "]",
        "~", "#", "é", "`", ".", "=",
    ];
    for a in alphabet {
        for b in alphabet {
            for c in alphabet {
                for d in alphabet {
                    let text = [a, b, c, d].concat();
                    let _ = in_text(&text);
                    let _ = in_argv(&[text.clone(), text.clone()]);
                    let _ = as_shell_line(&[text]);
                }
            }
        }
    }
}

#[test]
fn a_word_its_program_takes_stays_quoted_in_the_shell_line() {
    let words: Vec<String> = ["find", ".", "-exec", "wc", "{}", ";", "|", "sort"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    assert_eq!(in_argv(&words).map(|s| s.offset), Some(6));
    assert_eq!(as_shell_line(&words), "find . -exec wc {} ';' | sort");
}

#[test]
fn shown_words_quote_what_a_shell_would_expand_and_nothing_else() {
    let argv: Vec<String> = [
        "./bench",
        "--size=64",
        "--threads={threads}",
        "a{1,2}",
        "{1..3}",
        "it's",
        "",
        "x y",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        shell_words(&argv),
        r#"./bench --size=64 --threads={threads} 'a{1,2}' '{1..3}' 'it'\''s' '' 'x y'"#
    );
}
