//! Properties of the parser beyond "never panics" (fuzz.rs): a valid command line, generated
//! flag by flag, runs the test it says (every value reaches the spec and the echoed profile);
//! a size with a unit is its byte count; an unknown option is named in the error, wherever it
//! stands. Runbooks hold command lines nobody re-reads, so a value silently dropped or changed
//! would run a test other than the one the runbook documents.

use crate::fuzz::cases;
use crate::{parse, Access, DiskspdError, WriteBuffers};
use iocap_model::RwMode;
use proptest::prelude::*;

/// A valid command line and the values it gives.
#[derive(Debug, Clone)]
struct Line {
    block: (u64, &'static str),
    requests: u32,
    threads: u32,
    write_pct: u8,
    random: bool,
    duration_s: u32,
    warmup_s: u32,
    cooldown_s: u32,
    zero: bool,
    unbuffered: bool,
    create_gib: u64,
    targets: usize,
}

impl Line {
    fn block_bytes(&self) -> u64 {
        let (n, unit) = self.block;
        n << unit_shift(unit)
    }

    fn args(&self) -> Vec<String> {
        let (n, unit) = self.block;
        let mut a = vec![
            format!("-b{n}{unit}"),
            format!("-o{}", self.requests),
            format!("-t{}", self.threads),
            format!("-w{}", self.write_pct),
            if self.random { "-r" } else { "-s" }.to_string(),
            format!("-d{}", self.duration_s),
            format!("-W{}", self.warmup_s),
            format!("-C{}", self.cooldown_s),
            format!("-c{}G", self.create_gib),
        ];
        a.extend(self.zero.then(|| "-Z".to_string()));
        a.extend(self.unbuffered.then(|| "-Sh".to_string()));
        a.extend((0..self.targets).map(|i| format!("/data/t{i}.dat")));
        a
    }
}

fn unit_shift(unit: &str) -> u32 {
    match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => unreachable!("a generated unit"),
    }
}

/// Block sizes iocap's engine runs: multiples of 512 B up to 64 MiB, with and without units.
fn block() -> impl Strategy<Value = (u64, &'static str)> {
    prop_oneof![
        (1u64..=128).prop_map(|n| (n * 512, "")),
        (1u64..=1024).prop_map(|n| (n, "K")),
        (1u64..=64).prop_map(|n| (n, "M")),
    ]
}

fn line() -> impl Strategy<Value = Line> {
    (
        (block(), 1u32..=64, 1u32..=16, 0u8..=100, any::<bool>()),
        (1u32..=600, 0u32..=60, 0u32..=60),
        (any::<bool>(), any::<bool>(), 1u64..=16, 1usize..=3),
    )
        .prop_map(|(a, b, c)| Line {
            block: a.0,
            requests: a.1,
            threads: a.2,
            write_pct: a.3,
            random: a.4,
            duration_s: b.0,
            warmup_s: b.1,
            cooldown_s: b.2,
            zero: c.0,
            unbuffered: c.1,
            create_gib: c.2,
            targets: c.3,
        })
}

/// Letters DiskSpd has no switch for.
const UNKNOWN: &[char] = &[
    'k', 'm', 'q', 'u', 'A', 'E', 'G', 'H', 'J', 'K', 'M', 'Q', 'U', 'V', 'Y',
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    #[test]
    fn a_valid_line_runs_the_values_it_gives(l in line()) {
        let run = parse(&l.args()).map_err(|e| TestCaseError::fail(format!("{l:?}: {e}")))?;
        let s = &run.specs[0];
        let bs = l.block_bytes();
        prop_assert_eq!(s.bs_bytes, bs);
        prop_assert_eq!((s.qd, s.threads), (l.requests, l.threads));
        prop_assert_eq!(s.write_pct, l.write_pct);
        // -r is random access, -w0 reads only, -w100 writes only, anything between a mix
        prop_assert_eq!(s.rw.is_random(), l.random);
        prop_assert_eq!(matches!(s.rw, RwMode::Read | RwMode::RandRead), l.write_pct == 0);
        prop_assert_eq!(matches!(s.rw, RwMode::Write | RwMode::RandWrite), l.write_pct == 100);
        prop_assert_eq!(s.duration_s, f64::from(l.duration_s));
        prop_assert_eq!((s.warmup_s, s.cooldown_s), (f64::from(l.warmup_s), f64::from(l.cooldown_s)));
        prop_assert_eq!(s.size_bytes, l.create_gib << 30);
        prop_assert_eq!(run.create_bytes, Some(l.create_gib << 30));
        prop_assert_eq!((s.direct, s.write_through), (l.unbuffered, l.unbuffered));
        prop_assert_eq!(s.compressible_pct == 100, l.zero);
        if l.random {
            prop_assert_eq!(s.align_bytes, bs);
        }
        let paths: Vec<String> = s.targets.iter().map(|t| t.path.clone()).collect();
        let typed: Vec<String> = (0..l.targets).map(|i| format!("/data/t{i}.dat")).collect();
        prop_assert_eq!(&paths, &typed);
        // and the echo of the command line says the same
        let p = &run.profile;
        prop_assert_eq!((p.block_bytes, p.requests, p.threads_per_target), (bs, l.requests, Some(l.threads)));
        prop_assert_eq!((p.write_pct, p.duration_s, p.warmup_s), (l.write_pct, l.duration_s, l.warmup_s));
        prop_assert_eq!(p.write_buffers == WriteBuffers::Zero, l.zero);
        let random = matches!(p.access, Access::Random { .. });
        prop_assert_eq!(random, l.random);
        prop_assert_eq!(&p.targets, &typed);
        prop_assert_eq!(run.command_line, format!("diskspd {}", l.args().join(" ")));
    }

    #[test]
    fn a_size_with_a_unit_is_its_byte_count(
        n in 1u64..=4096,
        unit in prop::sample::select(vec!["", "K", "M", "G", "T"]),
        blocks in any::<bool>(),
    ) {
        let (value, bytes) = if blocks {
            (format!("{n}b"), n * 8192)
        } else {
            (format!("{n}{unit}"), n << unit_shift(unit))
        };
        let run = parse(&["-b8K".to_string(), format!("-c{value}"), "t.dat".into()]);
        match run {
            Ok(run) => prop_assert_eq!(run.create_bytes, Some(bytes)),
            // a file smaller than one block cannot run; the size was still read right
            Err(DiskspdError::Spec(e)) => prop_assert!(bytes < 8192, "{value}: {e}"),
            Err(e) => prop_assert!(false, "{value}: {e}"),
        }
    }

    #[test]
    fn an_unknown_option_is_named_wherever_it_stands(
        l in line(),
        letter in prop::sample::select(UNKNOWN),
        tail in "[0-9a-z]{0,5}",
        at in any::<prop::sample::Index>(),
        long in any::<bool>(),
    ) {
        let unknown = if long {
            format!("--{letter}{tail}x")
        } else {
            format!("-{letter}{tail}")
        };
        let mut args = l.args();
        let flags = args.len() - l.targets;
        args.insert(at.index(flags + 1), unknown.clone());
        let e = parse(&args).expect_err("an unknown option");
        let is_named = matches!(&e, DiskspdError::BadFlag { flag, .. } if *flag == unknown);
        prop_assert!(is_named, "{:?}: {:?}", args, e);
        prop_assert!(e.to_string().starts_with(&format!("option {unknown}: ")), "{}", e);
    }

    /// `-B<base>:<length>` and `-B<base> -f<end>` test the same region: it starts at the base
    /// and its length is the length, or the end less the base; the echo keeps DiskSpd's end.
    #[test]
    fn a_base_and_its_end_give_one_region(base_k in 0u64..=4096, len_k in 8u64..=4096) {
        let (base, len) = (base_k << 10, len_k << 10);
        let arg = |a: &str| vec!["-b8K".to_string(), a.to_string(), "t.dat".into()];
        let with_length = parse(&arg(&format!("-B{base_k}K:{len_k}K")))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let args = ["-b8K".to_string(), format!("-B{base_k}K"), format!("-f{}K", base_k + len_k), "t.dat".into()];
        let with_end = parse(&args).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for run in [&with_length, &with_end] {
            let s = &run.specs[0];
            prop_assert_eq!((s.base_bytes, s.targets[0].size_bytes), (base, Some(len)));
            prop_assert_eq!((run.profile.base_bytes, run.profile.max_size_bytes), (base, base + len));
        }
    }
}
