//! The DiskSpd command lines that DiskSpd's documentation, Microsoft's guides and the tools
//! built on DiskSpd give, each read by `iocap diskspd` as it is published (only the target is
//! a plain file name). For each: whether it runs, and every place iocap says it runs something
//! other than DiskSpd would (its notes). The list is what docs/diskspd.md's "Documented
//! command lines" section states; `cargo test -p iocap-diskspd --test documented -- --nocapture`
//! prints it.

use iocap_diskspd::parse;

/// What iocap does with a line.
enum Expect {
    /// Runs with DiskSpd's meaning, no note.
    Same,
    /// Runs, and says where it differs: every note holds one of these.
    Noted(&'static [&'static str]),
}

/// (where the line is published, the line).
const LINES: &[(&str, &str, Expect)] = &[
    // DiskSpd's usage text (`diskspd -?`)
    (
        "diskspd -? example 1",
        "-c8192K -d1 testfile.dat",
        Expect::Same,
    ),
    (
        "diskspd -? example 2",
        "-b4K -t2 -r -o32 -d10 -Sh testfile.dat",
        Expect::Same,
    ),
    (
        "diskspd -? example 3",
        "-c1G -b4K -t2 -d10 -a0,1 testfile1.dat testfile2.dat",
        Expect::Noted(&["-a"]),
    ),
    // DiskSpd's wiki: sequential streams and interleaving
    (
        "DiskSpd wiki: interleaved sequential",
        "-c2G -b4K -F8 -T1b -s8b -o4 -d10 -Sh testfile.dat",
        Expect::Same,
    ),
    (
        "DiskSpd wiki: interlocked sequential",
        "-c1G -b64K -t4 -si -o2 -d10 testfile.dat",
        Expect::Same,
    ),
    (
        "DiskSpd wiki: thread stride",
        "-c1G -b64K -t2 -T256M -o2 -d10 testfile.dat",
        Expect::Same,
    ),
    // Microsoft Learn: benchmark a disk (Azure VMs)
    (
        "Azure disk benchmark: max write IOPS",
        "-c200G -w100 -b8K -F4 -r -o128 -W30 -d30 -Sh testfile.dat",
        Expect::Noted(&["write"]),
    ),
    (
        "Azure disk benchmark: max read IOPS",
        "-c200G -b8K -F4 -r -o128 -W30 -d30 -Sh testfile.dat",
        Expect::Same,
    ),
    (
        "Azure disk benchmark: max write throughput",
        "-c200G -w100 -b64K -F4 -T1b -s8b -o32 -W30 -d30 -Sh testfile.dat",
        Expect::Noted(&["write"]),
    ),
    (
        "Azure disk benchmark: max read throughput",
        "-c200G -b64K -F4 -T1b -s8b -o32 -W30 -d30 -Sh testfile.dat",
        Expect::Same,
    ),
    // Microsoft Learn: DiskSpd on Azure Stack HCI / S2D
    (
        "Azure Stack HCI: DiskSpd example",
        "-t2 -o32 -b4k -r4k -w0 -d120 -Sh -D -L -c5G IO.dat",
        Expect::Same,
    ),
    // SQL Server guides
    (
        "SQL Server: 8K random 25 % writes",
        "-b8K -d30 -o4 -t8 -h -r -w25 -L -Z1G -c20G iotest.dat",
        Expect::Noted(&["-Z1G"]),
    ),
    (
        "SQL Server: 64K random 40 % writes",
        "-c150G -d300 -r -w40 -t8 -o32 -b64K -Sh -L diskspdtmp.dat",
        Expect::Noted(&["write"]),
    ),
    // VMFleet
    (
        "VMFleet: 4K random reads",
        "-b4k -t1 -o32 -w0 -r -d60 -W30 -C30 -Z20M -L -D -Rxml target.dat",
        Expect::Same,
    ),
    (
        "VMFleet: 70/30 throttled",
        "-b4k -t1 -o8 -w30 -r -d60 -W30 -C30 -g500i -Z20M -L -D -Rxml target.dat",
        Expect::Noted(&["-Z20M"]),
    ),
    // VirtualClient
    (
        "VirtualClient: disk fill",
        "-c496G -b256K -si4K -t1 -o64 -w100 -d300 -Sh -L -Rtext fill.dat",
        Expect::Noted(&["write"]),
    ),
    (
        "VirtualClient: 4K random writes QD1",
        "-c496G -b4K -r4K -t1 -o1 -w100 -d300 -Suw -W15 -D -L -Rtext test.dat",
        Expect::Noted(&["write"]),
    ),
    // the lines issue 27 found refused
    (
        "-B base offset",
        "-c2G -B1G -b8K -r -d10 testfile.dat",
        Expect::Same,
    ),
    (
        "-B base and length",
        "-c2G -B512M:1G -b8K -r -d10 testfile.dat",
        Expect::Noted(&["created at the -f size"]),
    ),
    ("-rs mix", "-c1G -rs50 -b8K -d10 testfile.dat", Expect::Same),
    (
        "-p parallel",
        "-c1G -p -o4 -b64K -d10 testfile.dat",
        Expect::Same,
    ),
    (
        "-i/-j bursts",
        "-c1G -i8 -j100 -b8K -r -d10 testfile.dat",
        Expect::Same,
    ),
    (
        "-O over targets",
        "-c1G -F4 -O16 -b8K -r -d10 testfile1.dat testfile2.dat",
        Expect::Noted(&["-O", "-F"]),
    ),
    (
        "-vs",
        "-c1G -vs -b8K -d10 testfile.dat",
        Expect::Noted(&["-vs"]),
    ),
    // DiskSpd for Linux's dialect
    (
        "DiskSpd for Linux: libaio, O_DIRECT, zeros",
        "-c1G -b4K -r -o32 -t4 -Sd -xk -Zz -w50 testfile.dat",
        Expect::Noted(&["-xk", "-Z:"]),
    ),
];

#[test]
fn every_documented_line_runs_and_says_where_it_differs() {
    let (mut report, mut wrong) = (Vec::new(), Vec::new());
    for (source, line, expect) in LINES {
        let args: Vec<&str> = line.split_whitespace().collect();
        let run = match parse(&args) {
            Ok(run) => run,
            Err(e) => {
                wrong.push(format!("{source}: `{line}` refused: {e}"));
                continue;
            }
        };
        match expect {
            Expect::Same if !run.notes.is_empty() => wrong.push(format!(
                "{source}: `{line}` should run as DiskSpd does, but: {:?}",
                run.notes
            )),
            Expect::Noted(words) => {
                if run.notes.is_empty() {
                    wrong.push(format!("{source}: `{line}`: no note"));
                }
                for note in &run.notes {
                    if !words.iter().any(|w| note.contains(w)) {
                        wrong.push(format!("{source}: `{line}`: unexpected note {note:?}"));
                    }
                }
            }
            Expect::Same => {}
        }
        report.push(format!("{source}: diskspd {line}"));
        for note in &run.notes {
            report.push(format!("    - {note}"));
        }
    }
    println!("{}", report.join("\n"));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
