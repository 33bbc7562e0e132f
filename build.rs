//! Build facts for `iocap --version`: the commit, the build date, the target, rustc and the
//! cargo features. Never fails the build: what cannot be found is `unknown`.
//!
//! Reruns only when the checked-out commit moves (HEAD, the branch it names, packed refs, the
//! HEAD reflog) or SOURCE_DATE_EPOCH changes, not on every build; the date is therefore the
//! date this script last ran.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());

    let commit = git_commit(&manifest)
        .or_else(|| vcs_info_commit(&manifest))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=IOCAP_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=IOCAP_BUILD_DATE={}", build_date());

    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=IOCAP_TARGET={target}");
    let rustc = std::env::var_os("RUSTC")
        .and_then(|r| Command::new(r).arg("-V").output().ok())
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=IOCAP_RUSTC={rustc}");
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(str::to_owned))
        .map(|f| f.to_lowercase().replace('_', "-"))
        .collect();
    features.sort();
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(", ")
    };
    println!("cargo:rustc-env=IOCAP_FEATURES={features}");
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// The short hash of HEAD, when this source tree is itself a git checkout (a `.git` directory,
/// or a file in a worktree): a tarball unpacked inside some other repository is not.
fn git_commit(manifest: &Path) -> Option<String> {
    if !manifest.join(".git").exists() {
        return None;
    }
    let commit = git(manifest, &["rev-parse", "--short", "HEAD"])?;
    watch_head(manifest);
    Some(commit)
}

/// Asks cargo to rerun this script when the commit moves. Only existing files: cargo reruns on
/// every build for a watched path that does not exist.
fn watch_head(manifest: &Path) {
    let Some(git_dir) = git(manifest, &["rev-parse", "--absolute-git-dir"]) else {
        return;
    };
    let git_dir = PathBuf::from(git_dir);
    // in a worktree the branches live in the main repository's directory
    let common = git(manifest, &["rev-parse", "--git-common-dir"])
        .map(|c| manifest.join(c))
        .unwrap_or_else(|| git_dir.clone());
    let mut watch = vec![
        git_dir.join("HEAD"),
        git_dir.join("logs/HEAD"),
        common.join("packed-refs"),
    ];
    if let Ok(head) = std::fs::read_to_string(git_dir.join("HEAD")) {
        if let Some(r) = head.trim().strip_prefix("ref: ") {
            watch.push(common.join(r));
        }
    }
    for p in watch.iter().filter(|p| p.is_file()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

/// A crate packaged by `cargo package` records its commit in `.cargo_vcs_info.json`.
fn vcs_info_commit(manifest: &Path) -> Option<String> {
    let s = std::fs::read_to_string(manifest.join(".cargo_vcs_info.json")).ok()?;
    let rest = &s[s.find("\"sha1\"")? + 6..];
    let rest = &rest[rest.find('"')? + 1..];
    let sha: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
    (sha.len() >= 7).then(|| sha[..7].to_string())
}

/// YYYY-MM-DD of SOURCE_DATE_EPOCH (reproducible builds) or of now, in UTC.
fn build_date() -> String {
    let secs = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => match v.trim().parse::<i64>() {
            Ok(s) => s,
            Err(_) => {
                println!("cargo:warning=SOURCE_DATE_EPOCH={v:?} is not a number; using now");
                now()
            }
        },
        Err(_) => now(),
    };
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}
