//! The recommendation for a run of Windows' methods: what each database does on Windows to make
//! its log durable, with the figure of the method that matches it. Pure, like the rest of
//! [`super`]; the same sentences whichever system reads the stored run.

use iocap_model::{format_bytes, DbFamily, FsyncPoint};

use super::{at, figure, ops};
use crate::method::Method;

/// Whether `points` are Windows' methods.
pub(super) fn measured_on_windows(points: &[FsyncPoint]) -> bool {
    points.iter().any(|p| {
        p.method
            .known()
            .is_some_and(|m| Method::WINDOWS.contains(&m))
    })
}

/// One or two plain sentences for `profile` at `size`, with the measured numbers.
pub(super) fn recommendation(profile: DbFamily, points: &[FsyncPoint], size: u64) -> String {
    let sz = format_bytes(size);
    let flush = at(points, size, Method::FlushFileBuffers);
    let through = at(points, size, Method::WriteThrough);
    let unbuffered = at(points, size, Method::NoBufferingWriteThrough);
    match profile {
        DbFamily::Postgres => {
            // PostgreSQL's Windows port opens O_DSYNC as FILE_FLAG_WRITE_THROUGH and O_DIRECT as
            // FILE_FLAG_NO_BUFFERING; its fsync and fsync_writethrough are FlushFileBuffers
            let verdict = match (through, flush) {
                (Some(_), Some(_)) if ops(through) < ops(flush) * 0.95 => {
                    "wal_sync_method = fsync_writethrough is more than 5 % faster here"
                }
                (Some(_), _) => "keep open_datasync",
                (None, _) => "measure write_through before moving off the default",
            };
            format!(
                "PostgreSQL on Windows: wal_sync_method = open_datasync (the Windows default) \
                 writes the WAL through FILE_FLAG_WRITE_THROUGH ({} at {sz}); fsync and \
                 fsync_writethrough write it, then call FlushFileBuffers ({}): {verdict}. \
                 open_datasync adds FILE_FLAG_NO_BUFFERING only at wal_level = minimal up to \
                 PostgreSQL 15, or with debug_io_direct = wal from 16 \
                 (NO_BUFFERING|WRITE_THROUGH: {}).",
                figure(through),
                figure(flush),
                figure(unbuffered)
            )
        }
        DbFamily::Mysql => format!(
            "MySQL/InnoDB on Windows: with innodb_flush_log_at_trx_commit = 1 each commit writes \
             the redo log, then flushes it with FlushFileBuffers ({} at {sz}); a write-through \
             write of the same size takes {} here.",
            figure(flush),
            figure(through)
        ),
        DbFamily::Sqlserver => format!(
            "SQL Server on Windows opens its log FILE_FLAG_NO_BUFFERING|FILE_FLAG_WRITE_THROUGH \
             and writes it overlapped ({} at {sz}): one such write at a time is the shortest a \
             commit waits (WRITELOG) at this size. A buffered write followed by \
             FlushFileBuffers, for comparison: {}.",
            figure(unbuffered),
            figure(flush)
        ),
        DbFamily::Oracle => format!(
            "Oracle on Windows does its own unbuffered, overlapped I/O (filesystemio_options is \
             for Unix file systems): NO_BUFFERING|WRITE_THROUGH is the nearest method measured \
             here ({} at {sz}), against {} for WRITE_THROUGH through the file cache.",
            figure(unbuffered),
            figure(through)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::recommendation as advice;
    use super::*;
    use iocap_model::LatencyUs;

    fn pt(m: Method, ops_per_s: f64) -> FsyncPoint {
        let mean = 1e6 / ops_per_s;
        FsyncPoint {
            method: m.into(),
            size_bytes: 8192,
            ops: (ops_per_s * 2.0) as u64,
            duration_s: 2.0,
            ops_per_s,
            lat_us: Some(LatencyUs {
                mean,
                p50: mean,
                p99: mean * 2.0,
                ..LatencyUs::default()
            }),
            available: true,
            reason: None,
        }
    }

    fn windows(flush: f64, through: f64, unbuffered: f64) -> Vec<FsyncPoint> {
        vec![
            pt(Method::FlushFileBuffers, flush),
            pt(Method::WriteThrough, through),
            pt(Method::NoBufferingWriteThrough, unbuffered),
        ]
    }

    #[test]
    fn windows_runs_get_windows_settings_and_linux_runs_do_not() {
        let p = windows(500.0, 1000.0, 2000.0);
        assert!(measured_on_windows(&p));
        assert!(!measured_on_windows(&[pt(Method::Fdatasync, 1000.0)]));
        let r = advice(DbFamily::Sqlserver, &p, None);
        assert!(
            r.starts_with("SQL Server on Windows opens its log FILE_FLAG_NO_BUFFERING"),
            "{r}"
        );
        assert!(r.contains("(2000 ops/s, p99 1000 µs at 8K)"), "{r}");
        assert!(
            r.contains("FlushFileBuffers, for comparison: 500 ops/s"),
            "{r}"
        );
        assert!(!r.contains("FUA") && !r.contains("queue/fua"), "{r}");
        let r = advice(DbFamily::Mysql, &p, None);
        assert!(r.contains("FlushFileBuffers (500 ops/s"), "{r}");
        let r = advice(DbFamily::Oracle, &p, None);
        assert!(
            r.contains("NO_BUFFERING|WRITE_THROUGH is the nearest"),
            "{r}"
        );
        assert!(r.contains("against 1000 ops/s"), "{r}");
    }

    #[test]
    fn postgres_on_windows_keeps_open_datasync_unless_the_flush_is_clearly_faster() {
        let r = advice(DbFamily::Postgres, &windows(1000.0, 980.0, 3000.0), None);
        assert!(r.contains("open_datasync (the Windows default)"), "{r}");
        assert!(r.contains(": keep open_datasync."), "{r}");
        assert!(r.contains("NO_BUFFERING|WRITE_THROUGH: 3000 ops/s"), "{r}");
        let r = advice(DbFamily::Postgres, &windows(1500.0, 1000.0, 3000.0), None);
        assert!(
            r.contains("fsync_writethrough is more than 5 % faster"),
            "{r}"
        );
        let only_flush = vec![pt(Method::FlushFileBuffers, 800.0)];
        let r = advice(DbFamily::Postgres, &only_flush, None);
        assert!(r.contains("FILE_FLAG_WRITE_THROUGH (not measured"), "{r}");
        assert!(r.contains("measure write_through before moving"), "{r}");
    }
}
