//! DiskSpd's documented command lines, each read field by field, and the refusals.

use super::*;
use crate::{parse, DiskspdRun, Profile};
use iocap_model::{JobSpec, RwMode, SeqStreams, TargetSpec};

fn run(line: &str) -> DiskspdRun {
    let args: Vec<String> = line.split_whitespace().map(String::from).collect();
    parse(&args).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn spec(line: &str) -> JobSpec {
    let r = run(line);
    assert_eq!(r.specs.len(), 1, "one timespan from a command line");
    r.specs[0].clone()
}

fn err(line: &str) -> DiskspdError {
    let args: Vec<&str> = line.split_whitespace().collect();
    parse(&args).expect_err(line)
}

#[test]
fn usage_example_create_and_read() {
    // "Create 8192KB file and run read test on it for 1 second"
    let r = run("-c8192K -d1 testfile.dat");
    let s = &r.specs[0];
    assert_eq!(s.targets, vec![TargetSpec::new("testfile.dat")]);
    assert_eq!(
        (s.rw, s.write_pct),
        (RwMode::Read, 0),
        "sequential read by default"
    );
    assert_eq!((s.bs_bytes, s.align_bytes), (64 << 10, 64 << 10));
    assert_eq!((s.qd, s.threads), (2, 1));
    assert_eq!((s.duration_s, s.warmup_s, s.cooldown_s), (1.0, 5.0, 0.0));
    assert_eq!(s.size_bytes, 8192 << 10);
    assert_eq!(r.create_bytes, Some(8192 << 10));
    assert!(!s.direct && !s.write_through, "DiskSpd caches by default");
    assert_eq!(s.seed, 0);
    assert_eq!(
        (r.output, r.latency, r.per_interval_std),
        (Output::Text, false, false)
    );
    assert_eq!(r.command_line, "diskspd -c8192K -d1 testfile.dat");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

#[test]
fn usage_example_random_uncached() {
    // "block size 4KB, 2 threads per file, 32 outstanding, all caching off, random, 10 s"
    let r = run("-b4K -t2 -r -o32 -d10 -Sh testfile.dat");
    let s = &r.specs[0];
    assert_eq!(
        (s.rw, s.bs_bytes, s.align_bytes),
        (RwMode::RandRead, 4096, 4096)
    );
    assert_eq!((s.threads, s.qd, s.duration_s), (2, 32, 10.0));
    assert!(s.direct && s.write_through, "-Sh: O_DIRECT + O_DSYNC");
    assert_eq!(r.create_bytes, None, "no -c: the target must exist");
    assert_eq!(r.profile.access, Access::Random { align_bytes: 4096 });
    assert_eq!(s.name, "diskspd -b4K -o32 -t2 -r -w0");
}

#[test]
fn usage_example_two_files_with_affinity() {
    let r = run("-c1G -b4K -t2 -d10 -a0,1 testfile1.dat testfile2.dat");
    let s = &r.specs[0];
    let paths: Vec<&str> = s.targets.iter().map(|t| t.path.as_str()).collect();
    assert_eq!(paths, ["testfile1.dat", "testfile2.dat"]);
    assert!(s.targets.iter().all(|t| t.cpu_mask == Some(0b11)));
    assert!(s
        .targets
        .iter()
        .all(|t| t.threads.is_none() && t.size_bytes.is_none()));
    assert_eq!(
        (s.threads, s.qd, s.bs_bytes, s.size_bytes),
        (2, 2, 4096, 1 << 30)
    );
    assert_eq!(r.profile.affinity, [0, 1]);
    assert!(
        r.notes.iter().any(|n| n.contains("CPUs 0,1")),
        "{:?}",
        r.notes
    );
}

#[test]
fn brief_oltp_example_every_field() {
    let r = run(r"-b8K -d60 -o8 -t4 -h -r -w30 -L -Z1M -c10G E:\t.dat");
    let s = &r.specs[0];
    assert_eq!(
        s.targets,
        vec![TargetSpec::new(r"E:\t.dat")],
        "a Windows path is kept"
    );
    assert_eq!((s.rw, s.write_pct), (RwMode::RandRw, 30));
    assert_eq!(
        (s.bs_bytes, s.align_bytes, s.qd, s.threads),
        (8192, 8192, 8, 4)
    );
    assert_eq!((s.duration_s, s.warmup_s), (60.0, 5.0));
    assert_eq!(s.size_bytes, 10 << 30);
    assert!(s.direct && s.write_through, "-h is -Sh");
    assert_eq!(s.compressible_pct, 0, "-Z1M is random data");
    assert!(r.latency);
    let p: &Profile = &r.profile;
    assert_eq!(p.write_buffers, WriteBuffers::Random { bytes: 1 << 20 });
    assert_eq!(
        (p.threads_per_target, p.total_threads, p.requests),
        (Some(4), None, 8)
    );
    assert!(p.disable_os_cache && p.write_through);
    assert!(
        r.notes.iter().any(|n| n.starts_with("-Z1M")),
        "{:?}",
        r.notes
    );
}

#[test]
fn gist_example_with_sh_and_cooldown() {
    let r = run(r"-b8K -d60 -o8 -t4 -r -w30 -Sh -L -c10G -W5 -C5 -Z1M E:\t.dat");
    let s = &r.specs[0];
    assert_eq!((s.warmup_s, s.cooldown_s), (5.0, 5.0));
    assert!(s.direct && s.write_through);
    assert_eq!(
        (s.rw, s.write_pct, s.qd, s.threads),
        (RwMode::RandRw, 30, 8, 4)
    );
}

/// `-si`: DiskSpd's threads, each with its own queue, take turns on one stream; iocap runs
/// the same threads on one shared stream (it used to fold them into one thread).
#[test]
fn interlocked_sequential_is_one_stream() {
    let r = run("-d60 -W5 -C5 -c1G -b64K -o2 -t2 -si -w100 log.dat");
    let s = &r.specs[0];
    assert_eq!((s.rw, s.write_pct), (RwMode::Write, 100));
    assert_eq!(
        (s.threads, s.qd),
        (2, 2),
        "two threads of two I/Os each, on one stream"
    );
    let shared = SeqStreams {
        stride_bytes: 64 << 10,
        thread_stride_bytes: 0,
        shared: true,
    };
    assert_eq!(s.streams, Some(shared));
    assert_eq!((s.duration_s, s.warmup_s, s.cooldown_s), (60.0, 5.0, 5.0));
    let interlocked = Access::Sequential {
        stride_bytes: 64 << 10,
        interlocked: true,
    };
    assert_eq!(r.profile.access, interlocked);
    assert_eq!(
        r.profile.threads_per_target,
        Some(2),
        "the profile keeps what was asked"
    );
    assert!(
        r.notes
            .iter()
            .all(|n| !n.contains("-si") && !n.contains("stream")),
        "nothing about the streams to explain: {:?}",
        r.notes
    );
}

#[test]
fn wiki_samples_large_area() {
    let s = spec("-c2G -b4K -F8 -r -o32 -W60 -d60 -Sh testfile.dat");
    assert_eq!(
        (s.rw, s.threads, s.qd, s.bs_bytes),
        (RwMode::RandRead, 8, 32, 4096)
    );
    assert_eq!(
        (s.warmup_s, s.duration_s, s.size_bytes),
        (60.0, 60.0, 2 << 30)
    );
    let s = spec("-c2G -w100 -b4K -r -o1 -W60 -d60 -Sh testfile.dat");
    assert_eq!(
        (s.rw, s.write_pct, s.threads, s.qd),
        (RwMode::RandWrite, 100, 1, 1)
    );
    let s = spec("-c2G -b4K -o1 -W60 -d60 -Sh testfile.dat");
    assert_eq!((s.rw, s.qd), (RwMode::Read, 1));
}

#[test]
fn wiki_samples_interleaved_sequential() {
    // -F8 -T1b -s8b: eight threads one block apart, each skipping eight, each with its own 32
    // in flight, as DiskSpd runs them (iocap used to run one thread of 256: 2.5-3x the IOPS)
    let r = run("-c2G -w100 -b4K -F8 -T1b -s8b -o32 -W60 -d60 -Sh testfile.dat");
    let s = &r.specs[0];
    assert_eq!((s.rw, s.threads, s.qd), (RwMode::Write, 8, 32));
    let lanes = SeqStreams {
        stride_bytes: 32 << 10,
        thread_stride_bytes: 4 << 10,
        shared: false,
    };
    assert_eq!(s.streams, Some(lanes));
    assert_eq!(r.profile.thread_stride_bytes, 4096);
    let stride = Access::Sequential {
        stride_bytes: 32 << 10,
        interlocked: false,
    };
    assert_eq!(r.profile.access, stride);
    assert_eq!(r.profile.total_threads, Some(8));
    // small area: 100 blocks of 4 KiB
    let s = spec("-c100b -b4K -o32 -F8 -T1b -s8b -W60 -d60 -Sh testfile.dat");
    assert_eq!((s.size_bytes, s.threads, s.qd), (409_600, 8, 32));
}

#[test]
fn sizes_in_blocks_follow_the_block_size_wherever_it_stands() {
    let r = run("-T2b -c10b -f8b -r1b -b8K t.dat");
    assert_eq!(r.profile.thread_stride_bytes, 16 << 10);
    assert_eq!(r.create_bytes, Some(80 << 10));
    assert_eq!(r.specs[0].targets[0].size_bytes, Some(64 << 10));
    assert_eq!(r.specs[0].align_bytes, 8192);
    assert_eq!(
        run("-b4K -b8K t.dat").specs[0].bs_bytes,
        8192,
        "the last -b wins"
    );
}

#[test]
fn caching_modes() {
    for (flags, direct, through) in [
        ("", false, false),
        ("-Sb", false, false),
        ("-S", true, false),
        ("-Su", true, false),
        ("-Sw", false, true),
        ("-Suw", true, true),
        ("-Swu", true, true),
        ("-Sbw", false, true),
        ("-Sh", true, true),
        ("-h", true, true),
        ("-Su -Sw", true, true),
    ] {
        let s = spec(&format!("{flags} t.dat"));
        assert_eq!((s.direct, s.write_through), (direct, through), "{flags}");
    }
}

#[test]
fn writes_random_alignment_and_seed() {
    for (flag, pct) in [("-w", 0), ("-w0", 0), ("-w100", 100), ("-w50", 50)] {
        assert_eq!(spec(&format!("{flag} -r t.dat")).write_pct, pct, "{flag}");
    }
    let s = spec("-b8K -r4K t.dat");
    assert_eq!((s.bs_bytes, s.align_bytes), (8192, 4096));
    assert_eq!(spec("-z42 t.dat").seed, 42);
    let r = run("-z t.dat");
    assert!(r.seed_from_clock);
    assert_eq!(r.specs[0].seed, 0);
}

#[test]
fn throttle_becomes_the_total_rate() {
    // 100 bytes per ms per thread per target, 4 threads on 2 targets: 800 KB/s in all
    let s = spec("-g100 -t4 a.dat b.dat");
    assert!(
        (s.rate_mb_s.unwrap() - 0.8).abs() < 1e-12,
        "{:?}",
        s.rate_mb_s
    );
    assert_eq!(s.rate_iops, None);
    let s = spec("-g500i -F2 -b8K a.dat");
    assert_eq!((s.rate_iops, s.rate_mb_s), (Some(1000.0), None));
    assert_eq!(
        run("-g1K t.dat").profile.throttle,
        Some(Throttle::BytesPerMs(1024))
    );
}

#[test]
fn output_latency_and_iops_deviation() {
    let r = run("-Rxml -L -D t.dat");
    assert_eq!(
        (r.output, r.latency, r.per_interval_std, r.interval_ms),
        (Output::Xml, true, true, 1000)
    );
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    let r = run("-Rtext -D500 t.dat");
    assert_eq!((r.output, r.interval_ms), (Output::Text, 500));
    // the engine samples at -D's interval: the spec asks for it, and no note says otherwise
    assert_eq!(r.specs[0].interval_ms, Some(500));
    assert!(
        r.notes.iter().all(|n| !n.starts_with("-D")),
        "{:?}",
        r.notes
    );
    assert_eq!(spec("-D t.dat").interval_ms, Some(1000));
    assert_eq!(spec("t.dat").interval_ms, None);
}

#[test]
fn write_buffers() {
    assert_eq!(spec("-Z -w10 t.dat").compressible_pct, 100);
    assert_eq!(
        run("-Zr t.dat").profile.write_buffers,
        WriteBuffers::RandomPerIo
    );
    assert_eq!(
        run("-Z2b -b4K t.dat").profile.write_buffers,
        WriteBuffers::Random { bytes: 8192 }
    );
    let r = run("-w30 t.dat");
    assert!(r.notes.iter().any(|n| n.contains("0-255")), "{:?}", r.notes);
    assert!(
        run("t.dat").notes.is_empty(),
        "no write, no note on write data"
    );
}

#[test]
fn targets_keep_windows_forms() {
    let r = run(r"-b8K #2 E: \\.\PhysicalDrive2 /dev/sdb");
    let paths: Vec<&str> = r.specs[0].targets.iter().map(|t| t.path.as_str()).collect();
    assert_eq!(paths, ["#2", "E:", r"\\.\PhysicalDrive2", "/dev/sdb"]);
    assert_eq!(r.profile.targets.len(), 4);
}

#[test]
fn accepted_without_effect() {
    let r = run("-x -l -v -P -frs -n -I3 -ag -B0 t.dat");
    let p = &r.profile;
    assert!(p.completion_routines && p.large_pages && p.verbose && p.no_affinity);
    assert_eq!(p.progress, 65_536);
    assert!(p.hints.random && p.hints.sequential && !p.hints.temporary);
    assert!(p.affinity.is_empty());
    let note = r
        .notes
        .iter()
        .find(|n| n.contains("no effect"))
        .expect("a note");
    for flag in ["-x", "-l", "-v", "-P", "-f<rst>"] {
        assert!(note.contains(flag), "{note}");
    }
}

#[test]
fn iocap_long_options_and_dashes() {
    let r = run("-b8K --allow-overwrite --engine psync t.dat --engine=io_uring");
    assert!(r.specs[0].allow_overwrite);
    assert_eq!(r.specs[0].engine, iocap_model::EngineChoice::IoUring);
    let args = ["\u{2013}b4K", "\u{2014}r", "t.dat"];
    let s = &parse(&args).unwrap().specs[0];
    assert_eq!((s.bs_bytes, s.rw), (4096, RwMode::RandRead));
}

#[test]
fn thread_pool_on_several_targets() {
    let r = run("-F4 -o8 a.dat b.dat");
    assert_eq!((r.specs[0].threads, r.specs[0].qd), (4, 8));
    assert!(
        r.notes.iter().any(|n| n.contains("8 in all")),
        "{:?}",
        r.notes
    );
    assert_eq!(spec("-F4 -O16 a.dat").qd, 16, "-O on one target");
}

/// Sequential threads start where DiskSpd starts them: all at 0, or `-T` apart; a stride
/// other than the block size (`-s8K -b4K`, VirtualClient's `-b256K -si4K` fill) is walked, no
/// longer refused.
#[test]
fn sequential_threads_start_where_diskspd_starts_them() {
    let lanes = |line: &str| spec(line).streams.unwrap();
    let s = lanes("-t4 t.dat");
    assert_eq!(
        (s.stride_bytes, s.thread_stride_bytes, s.shared),
        (64 << 10, 0, false)
    );
    assert_eq!(lanes("-t4 -T1M t.dat").thread_stride_bytes, 1 << 20);
    assert_eq!(lanes("-s8K -b4K t.dat").stride_bytes, 8 << 10);
    let fill = lanes("-b256K -si4K t.dat");
    assert!(fill.shared && fill.stride_bytes == 4 << 10, "{fill:?}");
    assert!(
        spec("-r t.dat").streams.is_none(),
        "random I/O walks no stream"
    );
    let r = run("-t4 -T1M t.dat");
    assert!(
        r.notes.iter().all(|n| !n.contains("apart")),
        "{:?}",
        r.notes
    );
    let r = run("-r -T1M t.dat");
    assert!(
        r.notes.iter().any(|n| n.contains("-T has no effect")),
        "{:?}",
        r.notes
    );
}

#[test]
fn errors_name_the_flag() {
    for (arg, problem) in [
        ("-b", "needs the block size attached"),
        ("-b0", "at least 1 byte"),
        ("-b2b", "cannot be given in blocks"),
        ("-b8KB", "unknown unit"),
        ("-d0", "duration in seconds must be at least 1"),
        ("-dx", "whole number, not 'x'"),
        ("-o0", "outstanding I/Os must be at least 1"),
        ("-o5000", "at most 4096"),
        ("-t0", "threads must be at least 1"),
        ("-w101", "write percentage must be at most 100"),
        ("-w-5", "whole number"),
        ("-Rjson", "takes text or xml, not 'json'"),
        ("-R", "needs text or xml"),
        ("-Rpxml", "-Rp"),
        ("-Sx", "unknown caching letter 'x'"),
        ("-Sr", "Windows file shares"),
        ("-Sm", "memory-mapped"),
        ("-Shw", "conflicts with an earlier"),
        ("-hx", "takes no value"),
        ("-Lx", "takes no value"),
        ("-rs", "needs the share of random I/O"),
        ("-rs0", "random percentage must be at least 1"),
        ("-rs101", "random percentage must be at most 100"),
        ("-rdpct90/10", "-rd"),
        ("-r0", "alignment must be greater than zero"),
        ("-s0", "stride must be greater than zero"),
        ("-B1M:", "needs a length after the colon"),
        ("-B1M:0", "length must be greater than zero"),
        ("-B1M;2M", "base offset"),
        ("-Z1M,data.bin", "from a file"),
        ("-c0", "file size must be greater than zero"),
        ("-T0", "thread stride must be greater than zero"),
        ("-g0", "greater than zero"),
        ("-gxi", "whole number"),
        ("-z-1", "whole number"),
        ("-z4294967296", "at most 4294967295"),
        ("-a0,g1,2", "group 1"),
        ("-a64", "at most 63"),
        ("-ag0", "needs CPU numbers"),
        ("-a0,,1", "needs the CPU number"),
        ("-f", "needs a target size or the hints"),
        ("-fq", "unknown access hint 'q'"),
        ("-I1", "normal priority"),
        ("-i0", "I/Os per burst must be at least 1"),
        ("-j0", "think time in milliseconds must be at least 1"),
        ("-px", "takes no value"),
        ("-vx", "takes no value"),
        ("-Nv", "memory-mapped"),
        ("-Xprofile.xml", "XML profiles"),
        ("-ysname", "Windows-only"),
        ("-eDISK_IO", "Windows-only"),
        ("-?", "docs/diskspd.md"),
        ("-k", "unknown option"),
        ("-", "lone dash"),
        ("--frobnicate", "unknown option"),
        ("--engine=spdk", "unknown engine 'spdk'"),
        ("--allow-overwrite=yes", "takes no value"),
    ] {
        let e = err(&format!("-b4K {arg} t.dat"));
        let DiskspdError::BadFlag { flag, problem: p } = &e else {
            panic!("{arg}: {e:?}");
        };
        assert_eq!(flag, arg);
        assert!(p.contains(problem), "{arg}: {p}");
        assert!(e.to_string().starts_with(&format!("option {arg}: ")), "{e}");
    }
}

#[test]
fn conflicts_and_order() {
    for (line, flag, problem) in [
        ("-t2 -F4 t.dat", "-F4", "conflict"),
        ("-F4 -t2 t.dat", "-t2", "conflict"),
        ("-r -s t.dat", "-s", "conflicts with -r"),
        ("-s -r t.dat", "-r", "conflicts with -s"),
        ("-r -r4K t.dat", "-r4K", "twice"),
        ("-rs50 -rs60 t.dat", "-rs60", "-rs) is given twice"),
        ("-s -rs50 t.dat", "-rs50", "-rs conflicts with -s"),
        ("-rs50 -s t.dat", "-s", "conflicts with -rs: use -r"),
        ("-rs50 -r4K -r8K t.dat", "-r8K", "twice"),
        ("-B1M -B2M t.dat", "-B2M", "only once"),
        ("-f1M -B0:1M t.dat", "-B0:1M", "only once"),
        ("-B0:1M -f1M t.dat", "-f1M", "only once"),
        ("-Su -Sb t.dat", "-Sb", "conflicts"),
        ("-Sw -h t.dat", "-h", "conflicts"),
        ("t.dat -b8K", "-b8K", "before its targets"),
    ] {
        match err(line) {
            DiskspdError::BadFlag {
                flag: f,
                problem: p,
            } => {
                assert_eq!(f, flag, "{line}");
                assert!(p.contains(problem), "{line}: {p}");
            }
            e => panic!("{line}: {e:?}"),
        }
    }
}

#[test]
fn usage_errors() {
    for (line, problem) in [
        ("-b8K", "at least one target"),
        ("", "at least one target"),
        ("-O8 t.dat", "without -F use -o"),
        ("-F2 -O1 a.dat b.dat", "needs -O2 or more here"),
        (
            "-i8 t.dat",
            "-i (I/Os per burst) and -j (think time) go together",
        ),
        ("-j8 t.dat", "go together"),
        (
            "-p -r t.dat",
            "-p (parallel I/O at one offset) conflicts with -r",
        ),
        ("-p -t2 -si t.dat", "conflicts with -si"),
        ("-F2 -O4 -p t.dat", "cannot be used with -O"),
        (
            "-F2 -O4 -i8 -j5 t.dat",
            "-j (think time) cannot be used with -O",
        ),
        ("-B1M -f512K t.dat", "must be past the base offset"),
        (
            "-B1M -f1M t.dat",
            "-f is an offset from the start of the target",
        ),
        ("-n -a0 t.dat", "conflict"),
        ("-t2 -si -T4K t.dat", "-si conflicts with -T"),
    ] {
        match err(line) {
            DiskspdError::Usage(p) => assert!(p.contains(problem), "{line}: {p}"),
            e => panic!("{line}: {e:?}"),
        }
    }
    let args = ["-b4K", "", "t.dat"];
    assert!(matches!(parse(&args), Err(DiskspdError::Usage(_))));
}

#[test]
fn rules_of_iocap_are_checked() {
    // a file smaller than a block, and a block size iocap cannot do with O_DIRECT
    for line in ["-c1K -b8K t.dat", "-b1000 t.dat"] {
        assert!(matches!(err(line), DiskspdError::Spec(_)), "{line}");
    }
    assert!(err("-b1000 t.dat")
        .to_string()
        .starts_with("the test cannot run: block size"));
}

/// DiskSpd for Linux's dialect runs as what it means: `-Sd` is O_DIRECT (`-Su`), `-Ss` O_SYNC
/// (`-Sw`), `-Zz` zeroed write buffers (`-Z`), `-Zr` random ones, and `-xk`/`-xp` (libaio, POSIX
/// aio) iocap's asynchronous engine, said in a note.
#[test]
fn diskspd_for_linux_s_own_letters_are_aliases() {
    let linux = spec("-b4K -o32 -t1 -r -d5 -W1 -Sd -L -xk t.dat");
    let windows = spec("-b4K -o32 -t1 -r -d5 -W1 -Su -L t.dat");
    assert_eq!(linux, windows);
    assert!(linux.direct && !linux.write_through);
    let s = spec("-b8K -w30 -Ss t.dat");
    assert!(s.write_through && !s.direct);
    assert_eq!(spec("-b8K -w30 -Sds t.dat"), spec("-b8K -w30 -Sh t.dat"));
    assert_eq!(spec("-w50 -Zz t.dat"), spec("-w50 -Z t.dat"));
    let r = run("-w50 -Zr t.dat");
    assert_eq!(r.profile.write_buffers, crate::WriteBuffers::RandomPerIo);
    for (flag, engine) in [("-xk", "libaio"), ("-xp", "POSIX aio")] {
        let r = run(&format!("-r -o8 {flag} t.dat"));
        assert!(!r.profile.completion_routines, "{flag}");
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains(flag) && n.contains(engine)),
            "{flag}: {:?}",
            r.notes
        );
    }
    let e = err("-xq t.dat").to_string();
    assert!(e.contains("-x takes no value, not 'q'"), "{e}");
    let e = err("-Sy t.dat").to_string();
    assert!(
        e.contains("unknown caching letter 'y'") && e.contains("d and s"),
        "{e}"
    );
}

/// DiskSpd's lines iocap refused until issue 27, each with DiskSpd's meaning.
mod refused_lines {
    use super::*;
    use iocap_model::ThinkTime;

    /// `-B<base>`: every target's I/O starts there; `-f` is the end offset, not a length, and
    /// `-B<base>:<length>` sets the end to base + length (DiskSpd's `MaxFileSize`).
    #[test]
    fn a_base_offset_moves_the_range_and_f_is_its_end() {
        let s = spec("-B1M t.dat");
        assert_eq!((s.base_bytes, s.targets[0].size_bytes), (1 << 20, None));
        let s = spec("-B1M -f3M t.dat");
        assert_eq!(
            (s.base_bytes, s.targets[0].size_bytes),
            (1 << 20, Some(2 << 20))
        );
        let r = run("-B1M:2M t.dat");
        let s = &r.specs[0];
        assert_eq!(
            (s.base_bytes, s.targets[0].size_bytes),
            (1 << 20, Some(2 << 20))
        );
        assert_eq!(
            (r.profile.base_bytes, r.profile.max_size_bytes),
            (1 << 20, 3 << 20)
        );
        // in blocks, as every size
        assert_eq!(spec("-b8K -B2b:4b t.dat").base_bytes, 16 << 10);
        assert_eq!(
            spec("-b8K -B2b:4b t.dat").targets[0].size_bytes,
            Some(32 << 10)
        );
        assert_eq!(spec("-B0 t.dat").base_bytes, 0);
        // a base iocap's O_DIRECT could not place is refused by the spec's rules
        assert!(matches!(err("-B1000 t.dat"), DiskspdError::Spec(_)));
    }

    /// `-rs<pct>`: that share of I/O is random, the rest follows the I/O before; `-r<align>`
    /// gives the alignment in either order, `-rs100` is plain `-r`.
    #[test]
    fn a_random_share_mixes_random_and_sequential() {
        let r = run("-b8K -rs30 t.dat");
        let s = &r.specs[0];
        assert_eq!(
            (s.rw, s.random_pct, s.align_bytes),
            (RwMode::RandRead, Some(30), 8192)
        );
        assert_eq!(r.profile.random_pct, Some(30));
        assert_eq!(spec("-b8K -rs30 -r4K t.dat").align_bytes, 4096);
        assert_eq!(spec("-b8K -r4K -rs30 -w20 t.dat").align_bytes, 4096);
        assert_eq!(spec("-b8K -r4K -rs30 -w20 t.dat").rw, RwMode::RandRw);
        assert_eq!(spec("-rs100 t.dat").random_pct, None);
        // the test's name in iocap's history tells the mix from plain -r
        assert_eq!(s.name, "diskspd -b8K -o2 -t1 -rs30 -w0");
        assert_eq!(spec("-rs100 t.dat").name, "diskspd -b64K -o2 -t1 -r -w0");
        assert_eq!(spec("-r t.dat").random_pct, None);
    }

    /// `-p`: a thread's outstanding I/Os walk the stream each on its own, at one offset.
    #[test]
    fn parallel_async_io_is_a_sequential_pattern() {
        let r = run("-o4 -p t.dat");
        assert!(r.specs[0].parallel && r.profile.parallel_async);
        assert!(!r.specs[0].rw.is_random());
        assert!(!spec("-o4 t.dat").parallel);
        assert_eq!(r.specs[0].name, "diskspd -b64K -o4 -t1 -s -p -w0");
    }

    /// `-i<count> -j<ms>`: each thread pauses `-j` ms after its share of `-i` completions
    /// (DiskSpd divides the count between a target's threads); `-g` wins over them.
    #[test]
    fn bursts_with_think_time_are_per_thread() {
        let r = run("-i40 -j5 -t4 t.dat");
        assert_eq!(
            r.specs[0].think,
            Some(ThinkTime {
                ios: 10,
                think_ms: 5
            })
        );
        assert_eq!(
            (r.profile.burst_ios, r.profile.think_ms),
            (Some(40), Some(5))
        );
        assert_eq!(spec("-i2 -j1 -t4 t.dat").think.unwrap().ios, 1);
        assert_eq!(spec("-i10 -j7 -F2 a.dat b.dat").think.unwrap().ios, 5);
        let r = run("-i10 -j7 -g100i t.dat");
        assert_eq!(r.specs[0].think, None);
        assert!(r.notes.iter().any(|n| n.contains("-g")), "{:?}", r.notes);
    }

    /// `-O<n>` with `-F` on several targets: each thread's n I/Os are split over the targets.
    #[test]
    fn a_pool_s_outstanding_ios_are_split_over_its_targets() {
        let r = run("-F2 -O8 a.dat b.dat");
        let s = &r.specs[0];
        assert_eq!((s.threads, s.target_qd.clone()), (2, vec![4, 4]));
        assert!(
            r.notes.iter().any(|n| n.contains("-O8 with 2 targets")),
            "{:?}",
            r.notes
        );
        let s = spec("-F1 -O5 a.dat b.dat c.dat");
        assert_eq!(s.target_qd, vec![2, 2, 1]);
        assert_eq!(
            (0..3).map(|i| s.target_depth(i)).collect::<Vec<_>>(),
            [2, 2, 1]
        );
        assert!(spec("-F2 -O8 a.dat").target_qd.is_empty());
    }

    /// `-r<align>` with a block of another size, and VirtualClient's fill `-b256K -si4K` (a
    /// stride smaller than the block), run as DiskSpd means them.
    #[test]
    fn alignments_and_strides_other_than_the_block_run() {
        let s = spec("-b8K -r4K -w100 t.dat");
        assert_eq!(
            (s.bs_bytes, s.align_bytes, s.rw),
            (8192, 4096, RwMode::RandWrite)
        );
        let s = spec("-b256K -si4K -w100 -t4 t.dat");
        let st = s.streams.unwrap();
        assert_eq!((st.stride_bytes, st.shared, s.threads), (4096, true, 4));
    }

    /// `-vs` (verbose summary statistics) is accepted and echoed, like `-v`.
    #[test]
    fn verbose_statistics_are_echoed() {
        let r = run("-vs t.dat");
        assert!(r.profile.verbose_stats && !r.profile.verbose);
        assert!(r.notes.iter().any(|n| n.contains("-vs")), "{:?}", r.notes);
    }
}
