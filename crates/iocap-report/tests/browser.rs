//! The HTML report in a real browser: headless Chromium loads a report of three runs on two
//! targets and a check script (added here, never part of the product) verifies that every chart
//! draws as many marks as it claims, each with a real size inside its chart, and that no text
//! sticks out of its chart or overlaps another. A second report, of a preflight run with
//! saturation, scale-up and a concurrent group beside a second saturation run, gets the same
//! checks (knee labels, target lines and slow bars included). Then a screenshot and a PDF
//! (print media) of each are written to `target/test-artifacts/` (`report`, `report-assess`)
//! for a human to look at.
//!
//! Without Chromium the test is skipped, except under CI, where it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use iocap_model::fixture::{self, FixtureRun};
use iocap_model::RwMode;

mod common;

const CHECK: &str = r##"<script>
(function () {
  var errors = [];
  window.onerror = function (msg, src, line) { errors.push(String(msg) + " at line " + line); };
  window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && t.tagName) errors.push("failed to load <" + t.tagName + "> " + (t.src || t.href || ""));
  }, true);
  ["error", "warn"].forEach(function (level) {
    var orig = console[level];
    console[level] = function () {
      errors.push("console." + level + ": " + Array.prototype.join.call(arguments, " "));
      return orig.apply(console, arguments);
    };
  });
  window.addEventListener("load", function () {
    var out = { charts: 0, marks: 0, texts: 0, problems: [], errors: errors };
    function problem(s) { if (out.problems.length < 60) out.problems.push(s); }
    try {
      document.querySelectorAll("svg.chart").forEach(function (svg) {
        out.charts++;
        var id = svg.getAttribute("data-chart") + "#" + svg.getAttribute("data-test");
        var n = Number(svg.getAttribute("data-points"));
        var marks = svg.querySelectorAll(".pt, .bar");
        if (marks.length !== n) problem(id + ": " + marks.length + " marks but data-points=" + n);
        var vb = svg.viewBox.baseVal;
        if (!vb || !(vb.width > 0 && vb.height > 0)) problem(id + ": no viewBox");
        marks.forEach(function (el) {
          out.marks++;
          var b = el.getBBox();
          if (!(b.width > 0 && b.height > 0)) problem(id + ": empty box " + JSON.stringify([b.x, b.y, b.width, b.height]));
          if (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.x + b.width > vb.x + vb.width + 0.5 ||
              b.y + b.height > vb.y + vb.height + 0.5)
            problem(id + ": mark outside the viewBox " + JSON.stringify([b.x, b.y, b.width, b.height]));
        });
        var r = svg.getBoundingClientRect();
        var rects = [];
        svg.querySelectorAll("text").forEach(function (t) {
          var q = t.getBoundingClientRect();
          if (!(q.width > 0)) return;
          out.texts++;
          if (q.left < r.left - 1 || q.right > r.right + 1 || q.top < r.top - 1 || q.bottom > r.bottom + 1)
            problem(id + ": text '" + t.textContent + "' sticks out of the chart");
          rects.push([q, t.textContent]);
        });
        for (var i = 0; i < rects.length; i++) for (var j = i + 1; j < rects.length; j++) {
          var a = rects[i][0], b = rects[j][0];
          var w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          var h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w > 1 && h > 1) problem(id + ": texts overlap: '" + rects[i][1] + "' and '" + rects[j][1] + "'");
        }
      });
    } catch (e) { errors.push("check script: " + e); }
    out.ok = out.charts > 0 && out.problems.length === 0 && errors.length === 0;
    var pre = document.createElement("pre");
    pre.id = "check";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  });
})();
</script>"##;

fn chromium() -> Option<PathBuf> {
    let fixed = PathBuf::from("/usr/bin/chromium");
    if fixed.is_file() {
        return Some(fixed);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
}

fn runs() -> Vec<iocap_model::RunResult> {
    let targets = vec![
        "/data/sqlserver/tempdb.iocap".to_string(),
        "/log/sqlserver/log.iocap".to_string(),
    ];
    let mut r: Vec<_> = [
        ("san-a raid10 before firmware", 40_000.0, 180.0),
        ("san-a raid10 after firmware", 60_000.0, 150.0),
        ("local nvme", 320_000.0, 60.0),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(label, iops, p50_us))| {
        fixture::run(&FixtureRun {
            targets: targets.clone(),
            label: Some(label.into()),
            tags: vec!["prod".into(), "sql".into()],
            iops,
            p50_us,
            rw: RwMode::RandRw,
            duration_s: 30,
            salt: i as u64 + 1,
            started_unix_s: 1_795_312_800 + 3600 * i as u64,
            ..FixtureRun::default()
        })
    })
    .collect();
    r[1].tests[0]
        .warnings
        .push("the queue depth was limited by the device (nr_requests 64)".into());
    r
}

/// Runs chromium with `args` on `url`, killed after 60 s; returns (stdout, stderr).
fn run_chromium(
    bin: &Path,
    dir: &Path,
    name: &str,
    args: &[String],
    url: &str,
) -> (String, String) {
    let profile = dir.join(format!("profile-{name}"));
    let (out_path, err_path) = (
        dir.join(format!("{name}.out")),
        dir.join(format!("{name}.err")),
    );
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish within 60 s; stderr:\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    (
        std::fs::read_to_string(&out_path).unwrap_or_default(),
        std::fs::read_to_string(&err_path).unwrap_or_default(),
    )
}

/// Console lines in Chromium's log. This Chromium logs every console message as
/// `INFO:CONSOLE` whatever its level, and neither the report nor the check script writes to the
/// console, so any console line at all is an error (older builds wrote `ERROR:CONSOLE`).
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// Loads `html` with the check script in Chromium; returns the script's verdict, which must
/// be `ok`.
fn check(bin: &Path, dir: &Path, name: &str, html: &str) -> serde_json::Value {
    assert!(html.contains("</body>"));
    let checked = html.replacen("</body>", &format!("{CHECK}</body>"), 1);
    let checked_path = dir.join(format!("{name}.html"));
    std::fs::write(&checked_path, &checked).unwrap();
    let url = format!("file://{}", checked_path.display());
    let (dom, stderr) = run_chromium(bin, dir, name, &["--dump-dom".into()], &url);
    let errors = console_errors(&stderr);
    assert!(errors.is_empty(), "console errors:\n{}", errors.join("\n"));
    let start = dom
        .find(r#"<pre id="check">"#)
        .unwrap_or_else(|| panic!("no verdict in the DOM; stderr:\n{stderr}"));
    let body = &dom[start + r#"<pre id="check">"#.len()..];
    let json = unescape(&body[..body.find("</pre>").expect("verdict closes")]);
    let verdict: serde_json::Value = serde_json::from_str(&json).expect("verdict is JSON");
    assert_eq!(
        verdict["ok"], true,
        "browser check of {name} failed: {verdict:#}"
    );
    verdict
}

/// Writes `target/test-artifacts/{name}.png` (the top `height` pixels of the page) and
/// `{name}.pdf` (print media), for people to look at.
fn print(bin: &Path, dir: &Path, name: &str, html: &str, height: u32) {
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let plain_path = dir.join(format!("{name}.html"));
    std::fs::write(&plain_path, html).unwrap();
    let url = format!("file://{}", plain_path.display());
    let png = artifacts.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    let (_, stderr) = run_chromium(
        bin,
        dir,
        &format!("{name}-screenshot"),
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size=1280,{height}"),
            "--hide-scrollbars".into(),
        ],
        &url,
    );
    let errors = console_errors(&stderr);
    assert!(errors.is_empty(), "console errors:\n{}", errors.join("\n"));
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 20_000,
        "screenshot {} is {size} bytes; stderr:\n{stderr}",
        png.display()
    );

    let pdf = artifacts.join(format!("{name}.pdf"));
    let _ = std::fs::remove_file(&pdf);
    let (_, stderr) = run_chromium(
        bin,
        dir,
        &format!("{name}-pdf"),
        &[
            format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer".into(),
            "--run-all-compositor-stages-before-draw".into(),
        ],
        &url,
    );
    let size = std::fs::metadata(&pdf).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 20_000,
        "PDF {} is {size} bytes; stderr:\n{stderr}",
        pdf.display()
    );
}

#[test]
fn charts_render_in_a_real_browser() {
    let Some(bin) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is required in CI; .ci/run installs it (apt-get install chromium)");
        }
        eprintln!("SKIPPED browser test: chromium is not installed (apt-get install chromium)");
        return;
    };
    let dir = std::env::temp_dir().join(format!(
        "iocap-html-browser-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let html = iocap_report::html::render(&runs());
    let verdict = check(&bin, &dir, "check", &html);
    assert_eq!(verdict["charts"], 6, "{verdict}");
    // 3 runs x (30 s x (IOPS + MB/s + p99 + mean) + 2 targets x 2 bar charts) + curves
    assert!(
        verdict["marks"].as_u64().unwrap() > 3 * (30 * 4 + 4),
        "{verdict}"
    );
    print(&bin, &dir, "report", &html, 2400);

    // a preflight run with saturation, scale-up and a concurrent group, and a second
    // saturation run overlaid on its curves
    let runs = [
        common::assessed_run(),
        common::saturation_run("san-a after firmware", 2, 1.6, 0.7),
    ];
    let html = iocap_report::html::render(&runs);
    let verdict = check(&bin, &dir, "check-assess", &html);
    let tests: usize = runs.iter().map(|r| r.tests.len()).max().unwrap();
    assert_eq!(verdict["charts"], tests * 6 + 4, "{verdict}");
    print(&bin, &dir, "report-assess", &html, 5200);
    let _ = std::fs::remove_dir_all(&dir);
}
