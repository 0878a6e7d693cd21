//! Command allowlists: a workspace allows programs by bare name, each with the patterns its
//! arguments must match (every argument matches at least one anchored pattern). Pure rules.

use regex::Regex;

use crate::domain::agent_tools::CommandRule;

/// A relative path that cannot leave the directory it is used in: segments start with a
/// letter, digit or `_` (so no `..`, no hidden files), no leading `/`.
pub const SAFE_PATH: &str = "[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*";

/// The allowlist a workspace gets when its administrator names none: read-only inspection
/// programs present on any Linux (and in Lambda's runtime image), with flags that only shape
/// their output and paths that stay inside the workspace copy. Nothing here writes, reaches
/// the network, runs other programs or reads configuration from the workspace.
pub fn default_rules() -> Vec<CommandRule> {
    let rule = |program: &str, patterns: &[&str]| CommandRule {
        program: program.into(),
        args: patterns
            .iter()
            .map(|p| p.replace("PATH", SAFE_PATH))
            .collect(),
        writes: false,
    };
    vec![
        rule("ls", &["-[alhR1]+", "PATH"]),
        rule("wc", &["-[lwcm]+", "PATH"]),
        rule("head", &["-n", "[0-9]{1,6}", "PATH"]),
        rule("tail", &["-n", "[0-9]{1,6}", "PATH"]),
        rule("diff", &["-u", "PATH"]),
    ]
}

/// Programs whose job is to run other programs (or a shell): allowing one would allow
/// everything, so they are refused outright.
const LAUNCHERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ash", "csh", "tcsh", "fish", "busybox", "env", "sudo",
    "su", "doas", "runuser", "sg", "xargs", "nohup", "setsid", "timeout", "nice", "ionice",
    "stdbuf", "taskset", "chroot", "unshare", "nsenter", "strace", "ltrace", "gdb", "flock",
    "watch", "script", "expect",
];

/// Whether a rule lets a path argument reach outside the workspace copy (an absolute path,
/// `..`, `/proc`): fine only for programs that never open their arguments.
pub fn reaches_outside(rule: &CommandRule) -> bool {
    [
        "/etc/passwd",
        "../secret",
        "a/../../secret",
        "/proc/self/environ",
    ]
    .iter()
    .any(|probe| {
        allows(
            std::slice::from_ref(rule),
            &rule.program,
            &[probe.to_string()],
        )
    })
}

/// Whether an argument could name a path outside the directory a command runs in, whatever
/// the program makes of it: an absolute or home-relative path, or one whose `..` climbs above
/// where it starts — the argument itself, an option's value after `=` (`--file=/etc/passwd`)
/// or a short option's attached value (`-f/etc/passwd`). Such arguments are refused for every
/// program, whatever its patterns allow: a pattern cannot know which arguments are paths.
pub fn leaves_directory(arg: &str) -> bool {
    let mut candidates = vec![arg];
    if let Some((_, value)) = arg.split_once('=') {
        candidates.push(value);
    }
    if arg.starts_with('-') && !arg.starts_with("--") {
        candidates.extend(arg.get(2..));
    }
    candidates.into_iter().any(climbs_out)
}

fn climbs_out(path: &str) -> bool {
    if path.starts_with('/') || path.starts_with('~') {
        return true;
    }
    let mut depth = 0usize;
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return true,
            },
            _ => depth += 1,
        }
    }
    false
}

/// Most argument patterns per program.
pub const MAX_PATTERNS: usize = 32;

/// Parses `PROGRAM` or `PROGRAM=PATTERN PATTERN...` (patterns are regular expressions matched
/// against a whole argument).
pub fn parse_rule(raw: &str) -> Result<CommandRule, String> {
    let (program, patterns) = raw.split_once('=').unwrap_or((raw, ""));
    let program = program.trim();
    let name_ok = !program.is_empty()
        && program.len() <= 64
        && program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
        && !program.starts_with('.');
    if !name_ok {
        return Err(format!(
            "`{program}` is not a bare program name (letters, digits, `._+-`; no paths)"
        ));
    }
    if LAUNCHERS.contains(&program) {
        return Err(format!(
            "`{program}` runs other programs; allow those programs instead"
        ));
    }
    let args: Vec<String> = patterns.split_whitespace().map(str::to_owned).collect();
    if args.len() > MAX_PATTERNS {
        return Err(format!("at most {MAX_PATTERNS} argument patterns"));
    }
    for a in &args {
        anchored(a).map_err(|e| format!("argument pattern `{a}`: {e}"))?;
    }
    Ok(CommandRule {
        program: program.to_owned(),
        args,
        writes: false,
    })
}

fn anchored(pattern: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(1 << 20)
        .build()
}

/// Whether `rules` allow running `program` with `args`.
pub fn allows(rules: &[CommandRule], program: &str, args: &[String]) -> bool {
    rules.iter().filter(|r| r.program == program).any(|r| {
        let compiled: Vec<Regex> = r.args.iter().filter_map(|p| anchored(p).ok()).collect();
        args.iter()
            .all(|a| compiled.iter().any(|re| re.is_match(a)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_match_whole_arguments() {
        let git = parse_rule("git=status|diff|log --oneline -n [0-9]+").unwrap();
        assert_eq!(git.program, "git");
        let rules = vec![git, parse_rule("ls").unwrap()];
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(allows(&rules, "git", &a(&["log", "--oneline", "-n", "5"])));
        assert!(!allows(&rules, "git", &a(&["push"])));
        assert!(!allows(&rules, "git", &a(&["status; rm -rf /"])));
        assert!(!allows(&rules, "git", &a(&["statusx"])));
        assert!(allows(&rules, "ls", &[]));
        assert!(!allows(&rules, "ls", &a(&["-la"])));
        assert!(!allows(&rules, "rm", &[]));
    }

    #[test]
    fn the_default_allowlist_stays_inside_the_workspace() {
        let rules = default_rules();
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(allows(&rules, "ls", &a(&["-la", "src/lib"])));
        assert!(allows(&rules, "head", &a(&["-n", "20", "README.md"])));
        assert!(allows(&rules, "diff", &a(&["-u", "a.txt", "b.txt"])));
        for bad in [
            &["../../etc/passwd"][..],
            &["/etc/passwd"],
            &["src/../../x"],
            &[".env"],
            &["--files0-from=/etc/passwd"],
        ] {
            assert!(!allows(&rules, "wc", &a(bad)), "{bad:?}");
        }
        assert!(!allows(&rules, "cat", &a(&["README.md"])));
        assert!(rules.iter().all(|r| !reaches_outside(r)));
        assert!(reaches_outside(
            &parse_rule("cat=[A-Za-z0-9_./-]+").unwrap()
        ));
        for r in &rules {
            for p in &r.args {
                assert!(anchored(p).is_ok(), "{p}");
            }
        }
    }

    #[test]
    fn arguments_that_climb_out_are_found_in_every_form() {
        for out in [
            "..",
            "../x",
            "a/../..",
            "./../x",
            "/etc/passwd",
            "~",
            "~/x",
            "--file=/etc/passwd",
            "--dir=..",
            "-f/etc/passwd",
            "-C..",
        ] {
            assert!(leaves_directory(out), "{out:?}");
        }
        for inside in [
            "-la",
            "-n",
            ".",
            "a/../b",
            "x=y",
            "...",
            "a~b",
            "https://h/p",
            "",
            "--",
        ] {
            assert!(!leaves_directory(inside), "{inside:?}");
        }
    }

    #[test]
    fn shells_paths_and_bad_patterns_are_refused() {
        for bad in [
            "sh",
            "bash=-c .*",
            "/bin/ls",
            "../x",
            "",
            "git=(",
            "a b",
            "busybox",
            "setsid",
        ] {
            assert!(parse_rule(bad).is_err(), "{bad:?}");
        }
    }
}
