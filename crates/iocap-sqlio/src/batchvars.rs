//! `%VAR%` in a batch file, expanded from the environment as cmd.exe expands it before it
//! splits a line: `%DATA%\test.dat` with `DATA=E:\sqlio` is `E:\sqlio\test.dat`, and `%%` is
//! one `%`. Test plans name their drives and paths this way, and taking `%DATA%\test.dat` as a
//! file name would test (and create) the wrong file. Where cmd.exe would quietly put nothing (a
//! variable that is not set) or iocap cannot know the value (the batch file's parameters `%1`,
//! `%~dp0`; the `%VAR:~0,2%` and `%VAR:a=b%` edits), the line is refused, naming the variable.

/// `line` with every `%NAME%` replaced by `env(NAME)` and `%%` by `%`; `Err` says why not.
pub fn expand(line: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('%') {
            out.push('%');
            rest = tail;
            continue;
        }
        if after.starts_with(|c: char| c.is_ascii_digit() || c == '*' || c == '~') {
            let shown: String = after.chars().take_while(|c| !c.is_whitespace()).collect();
            return Err(format!(
                "%{shown} is a parameter of the batch file, which iocap runs without any; \
                 write its value in the file"
            ));
        }
        let Some(end) = after.find('%') else {
            return Err(
                "a lone % (write %% for a percent sign, %NAME% for a variable)".to_string(),
            );
        };
        let name = &after[..end];
        if name.contains(':') {
            return Err(format!(
                "%{name}%: iocap expands plain %NAME% variables, not the :~ and := edits"
            ));
        }
        match env(name) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(format!(
                    "%{name}% is not set in the environment; set {name} or write its value \
                     in the file"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A variable of this process's environment, by its name in any case as cmd.exe looks it up.
pub fn process_env(name: &str) -> Option<String> {
    if let Ok(v) = std::env::var(name) {
        return Some(v);
    }
    std::env::vars_os().find_map(|(k, v)| {
        let k = k.to_str()?;
        k.eq_ignore_ascii_case(name)
            .then(|| v.to_string_lossy().into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "DATA" => Some(r"E:\sqlio".into()),
            "SECS" => Some("60".into()),
            "TWO" => Some("-o8 -b64".into()),
            _ => None,
        }
    }

    #[test]
    fn variables_are_expanded_and_double_percent_is_one() {
        assert_eq!(
            expand(r"sqlio -s%SECS% %DATA%\t.dat", &env).unwrap(),
            r"sqlio -s60 E:\sqlio\t.dat"
        );
        assert_eq!(
            expand("sqlio %TWO% 100%%", &env).unwrap(),
            "sqlio -o8 -b64 100%"
        );
        assert_eq!(expand("sqlio -kR", &env).unwrap(), "sqlio -kR");
    }

    #[test]
    fn what_cannot_be_expanded_is_refused_by_name() {
        let e = |s: &str| expand(s, &env).unwrap_err();
        assert_eq!(
            e(r"sqlio %DATADIR%\t.dat"),
            "%DATADIR% is not set in the environment; set DATADIR or write its value in the file"
        );
        assert!(e(r"sqlio %1\t.dat").starts_with(r"%1\t.dat is a parameter"));
        assert!(e(r"%~dp0sqlio.exe -kR").starts_with("%~dp0sqlio.exe is a parameter"));
        assert!(e("sqlio %DATA:~0,2%").contains(":~ and :="));
        assert!(e("sqlio -s50%").starts_with("a lone %"));
    }

    #[test]
    fn the_process_environment_is_read_in_any_case() {
        let (name, value) = std::env::vars()
            .find(|(k, _)| k.chars().any(|c| c.is_ascii_uppercase()))
            .expect("some upper-case variable, such as PATH");
        assert_eq!(process_env(&name.to_ascii_lowercase()), Some(value));
    }
}
