use super::scan::{DirSpec, Scanner};
use super::*;

fn file(path: &str, extents: &[[u64; 2]]) -> MappedFile {
    MappedFile {
        path: path.into(),
        dev: DevId { major: 7, minor: 0 },
        role: None,
        extents: extents.to_vec(),
    }
}

#[test]
fn roles_follow_the_databases_own_file_names() {
    let r = role_of_path;
    assert_eq!(
        r("/pg/data/pg_wal/000000010000000000000001"),
        StreamRole::Log
    );
    assert_eq!(r("/var/lib/mysql/ib_logfile0"), StreamRole::Log);
    assert_eq!(r("/var/lib/mysql/#innodb_redo/#ib_redo9"), StreamRole::Log);
    // MariaDB: the Aria engine's log (its system tables' WAL) is a log, its control file not;
    // the doublewrite buffer lives in the system tablespace, which is data
    assert_eq!(r("/var/lib/mysql/aria_log.00000001"), StreamRole::Log);
    assert_eq!(r("/var/lib/mysql/aria_log_control"), StreamRole::Data);
    assert_eq!(r("/var/lib/mysql/ibdata1"), StreamRole::Data);
    assert_eq!(r("/srv/app.db-wal"), StreamRole::Log);
    assert_eq!(r("E:\\sql\\prod_log.ldf"), StreamRole::Log);
    assert_eq!(r("/t/iocap-log.testfile"), StreamRole::Log);
    assert_eq!(
        r("/var/lib/mysql/#ib_16384_0.dblwr"),
        StreamRole::Doublewrite
    );
    assert_eq!(
        r("/pg/data/base/pgsql_tmp/pgsql_tmp123.0"),
        StreamRole::Temp
    );
    assert_eq!(r("/var/lib/mysql/ibtmp1"), StreamRole::Temp);
    assert_eq!(r("/var/lib/mysql/#sql-1a2b_3.ibd"), StreamRole::Temp);
    assert_eq!(r("/pg/data/base/16384/2619"), StreamRole::Data);
    assert_eq!(r("/var/lib/mysql/sbtest/sbtest1.ibd"), StreamRole::Data);
    assert_eq!(r("/t/iocap.testfile"), StreamRole::Data);
    // a directory named like a log file does not make its files the log
    assert_eq!(r("/srv/x.ldf/table"), StreamRole::Data);
}

#[test]
fn a_lookup_finds_the_file_holding_the_byte() {
    let map = FileMap {
        files: vec![
            file("/d/pg_wal/1", &[[1 << 20, 16 << 20]]),
            file("/d/base/1/100", &[[0, 8192], [64 << 20, 1 << 20]]),
        ],
        ..FileMap::default()
    };
    let ix = FileIndex::new(&map);
    let dev = DevId { major: 7, minor: 0 };
    assert_eq!(ix.file_at(dev, 0), Some(1));
    assert_eq!(ix.file_at(dev, 8191), Some(1));
    assert_eq!(ix.file_at(dev, 8192), None, "between extents");
    assert_eq!(ix.file_at(dev, 1 << 20), Some(0));
    assert_eq!(ix.file_at(dev, (17 << 20) - 1), Some(0));
    assert_eq!(ix.file_at(dev, 17 << 20), None);
    assert_eq!(ix.file_at(dev, 64 << 20), Some(1));
    assert_eq!(
        ix.file_at(DevId { major: 8, minor: 0 }, 0),
        None,
        "other disk"
    );
    assert_eq!(ix.role(0), StreamRole::Log);
    assert_eq!(ix.role(1), StreamRole::Data);
}

#[test]
fn where_extents_overlap_the_file_mapped_later_wins() {
    let map = FileMap {
        files: vec![
            file("/d/deleted", &[[0, 1 << 30]]),
            file("/d/new", &[[4096, 4096]]),
        ],
        ..FileMap::default()
    };
    let ix = FileIndex::new(&map);
    let dev = DevId { major: 7, minor: 0 };
    assert_eq!(ix.file_at(dev, 4096), Some(1));
    assert_eq!(ix.file_at(dev, 0), Some(0));
    assert_eq!(ix.file_at(dev, 1 << 29), Some(0));
}

#[test]
fn a_later_snapshot_replaces_a_files_extents_and_adds_new_files() {
    let mut map = FileMap {
        files: vec![file("/d/a", &[[0, 4096]])],
        ..FileMap::default()
    };
    map.merge(FileMap {
        files: vec![file("/d/a", &[[0, 8192]]), file("/d/b", &[[8192, 4096]])],
        ..FileMap::default()
    });
    assert_eq!(map.files.len(), 2);
    assert_eq!(map.files[0].extents, vec![[0, 8192]]);
    assert_eq!(map.extents(), 2);
    let back = FileMap::from_json(&map.to_json()).unwrap();
    assert_eq!(back, map);
}

#[test]
fn a_directory_is_given_a_role_or_taken_as_it_is() {
    let d = DirSpec::parse("log=/pg/wal").unwrap();
    assert_eq!(
        (d.path.to_str(), d.role),
        (Some("/pg/wal"), Some(StreamRole::Log))
    );
    let d = DirSpec::parse("/pg/data").unwrap();
    assert_eq!(d.role, None);
    let e = DirSpec::parse("logs=/pg/wal").unwrap_err();
    assert!(e.contains("'logs' is not a role"), "{e}");
    assert!(Scanner::new(vec![DirSpec::parse("/no/such/dir").unwrap()]).is_err());
}

#[cfg(target_os = "linux")]
#[test]
fn a_scan_maps_a_written_file_and_then_only_what_changed() {
    use std::io::Write;
    // on the disk the crate is built on (a tmpfs has no extents)
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::tempdir_in(&base).unwrap();
    std::fs::create_dir(dir.path().join("pg_wal")).unwrap();
    let wal = dir.path().join("pg_wal/000000010000000000000001");
    let mut f = std::fs::File::create(&wal).unwrap();
    // random bytes: a file system that compresses could not shrink them to nothing
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let block: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    f.write_all(&block).unwrap();
    f.sync_all().unwrap();
    let mut s = Scanner::new(vec![
        DirSpec::parse(&dir.path().display().to_string()).unwrap()
    ])
    .unwrap();
    let first = s.scan();
    if first.files.is_empty() {
        // a file system without FIEMAP or a stacked device: the map says why
        assert!(!first.skipped.is_empty(), "{first:?}");
        return;
    }
    assert_eq!(first.dirs.len(), 1);
    assert_eq!(first.files.len(), 1, "{first:?}");
    let mapped: u64 = first.files[0].extents.iter().map(|e| e[1]).sum();
    assert!(mapped >= 1 << 20, "{mapped} bytes mapped of 1 MiB");
    assert_eq!(first.files[0].role(), StreamRole::Log);
    assert!(s.scan().files.is_empty(), "nothing changed");
    f.write_all(&block).unwrap();
    f.sync_all().unwrap();
    let again = s.scan();
    assert_eq!(again.files.len(), 1, "the grown file is mapped again");
    let mapped: u64 = again.files[0].extents.iter().map(|e| e[1]).sum();
    assert!(mapped >= 2 << 20, "{mapped}");
}
