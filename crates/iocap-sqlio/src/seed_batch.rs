//! The batch file of seed 003 (a SQL Server I/O white paper), end to end: batch text to
//! BatchLines to JobSpecs. Copied verbatim, including its en dashes and its comment lines.

use crate::{parse_args, parse_batch, SqlioCall};
use iocap_model::RwMode;

/// Line ends are LF here; `calls` turns them into CRLF, as on Windows.
const SEED_003_BATCH: &str = r"::Test randmon IO's of 8K
call sqlio -kW -s600 -frandom -o32 -b8 -LS -Fparam.txt
call sqlio -kR -s600 -frandom -o32 -b8 -LS -Fparam.txt

::Test small sequential writes 
call sqlio -kW -s60 -fsequential -o1 -b4 -LS -Fparam.txt
call sqlio -kW -s60 -fsequential -o1 -b8 -LS -Fparam.txt
call sqlio -kW -s60 -fsequential -o1 -b16 -LS -Fparam.txt
call sqlio -kW -s60 -fsequential -o1 -b32 -LS -Fparam.txt
call sqlio -kW -s60 -fsequential -o1 -b64 -LS -Fparam.txt

::Test large sequential read/write
call sqlio -kR -s60 -fsequential -o8 –b8 -LS -Fparam.txt
call sqlio -kR -s60 -fsequential -o8 -b64 -LS -Fparam.txt
call sqlio -kR -s60 -fsequential -o8 -b128 -LS -Fparam.txt
call sqlio -kR -s60 -fsequential -o8 -b256 -LS -Fparam.txt
call sqlio -kW -s60 -fsequential -o8 –b8 -LS -Fparam.txt
call sqlio -kW -s60 -fsequential -o8 -b64 -LS -Fparam.txt
call sqlio -kW -s60 -fsequential -o8 -b128 -LS -Fparam.txt
call sqlio -kW -s60 -fsequential -o8 -b256 -LS -Fparam.txt
";

fn param_txt(path: &str) -> std::io::Result<String> {
    assert_eq!(path, "param.txt");
    Ok("c:\\sqlio_test.dat 4 0x0 100\nd:\\sqlio_test.dat 4 0x0 100\n".into())
}

fn calls() -> Vec<SqlioCall> {
    let text = SEED_003_BATCH.replace('\n', "\r\n");
    let lines = parse_batch(&text).unwrap();
    assert_eq!(lines.len(), 15);
    lines
        .iter()
        .map(|b| parse_args(&b.args, &param_txt).unwrap_or_else(|e| panic!("line {}: {e}", b.line)))
        .collect()
}

#[test]
fn fifteen_calls_with_their_line_numbers() {
    let lines = parse_batch(SEED_003_BATCH).unwrap();
    let numbers: Vec<usize> = lines.iter().map(|b| b.line).collect();
    assert_eq!(
        numbers,
        [2, 3, 6, 7, 8, 9, 10, 13, 14, 15, 16, 17, 18, 19, 20]
    );
    assert_eq!(
        lines[7].args[4], "\u{2013}b8",
        "en dash kept for parse_args"
    );
}

#[test]
fn first_call_is_random_write_600s_qd32_8k() {
    let c = &calls()[0];
    let s = &c.spec;
    assert_eq!((s.rw, s.write_pct), (RwMode::RandWrite, 100));
    assert_eq!(s.duration_s, 600.0);
    assert_eq!((s.qd, s.bs_bytes), (32, 8192));
    assert_eq!(c.latency_timer, Some('S'));
    assert_eq!(c.param_file.as_deref(), Some("param.txt"));
    assert_eq!(s.targets.len(), 2);
    assert!(s
        .targets
        .iter()
        .all(|t| t.threads == Some(4) && t.size_bytes == Some(100 << 20)));
    assert_eq!(s.name, "sqlio -kW -frandom -b8 -o32");
    s.validate().unwrap();
}

#[test]
fn every_call_maps_as_written() {
    let expected: [(RwMode, u64, u32, f64); 15] = [
        (RwMode::RandWrite, 8, 32, 600.0),
        (RwMode::RandRead, 8, 32, 600.0),
        (RwMode::Write, 4, 1, 60.0),
        (RwMode::Write, 8, 1, 60.0),
        (RwMode::Write, 16, 1, 60.0),
        (RwMode::Write, 32, 1, 60.0),
        (RwMode::Write, 64, 1, 60.0),
        (RwMode::Read, 8, 8, 60.0),
        (RwMode::Read, 64, 8, 60.0),
        (RwMode::Read, 128, 8, 60.0),
        (RwMode::Read, 256, 8, 60.0),
        (RwMode::Write, 8, 8, 60.0),
        (RwMode::Write, 64, 8, 60.0),
        (RwMode::Write, 128, 8, 60.0),
        (RwMode::Write, 256, 8, 60.0),
    ];
    for (i, (c, (rw, kb, qd, secs))) in calls().iter().zip(expected).enumerate() {
        let s = &c.spec;
        assert_eq!(
            (s.rw, s.bs_bytes, s.qd, s.duration_s),
            (rw, kb * 1024, qd, secs),
            "call {i}"
        );
        assert!(c.notes.is_empty(), "call {i}: {:?}", c.notes);
        s.validate().unwrap();
    }
}

#[test]
fn en_dash_lines_give_8k_blocks() {
    let calls = calls();
    for i in [7, 11] {
        assert_eq!(calls[i].spec.bs_bytes, 8192, "call {i}");
    }
}
