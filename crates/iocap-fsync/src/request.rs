//! What a user asks of `iocap fsync`, before the defaults: a [`Request`] becomes a [`Plan`]
//! once the target is known to exist and the time per point is sane. Here rather than in the
//! command line so that every front end fills in the same defaults (2 s a point, five sizes;
//! `quick`: 1 s, 8K and 16K) and refuses the same requests with the same words.

use crate::{
    method, DbFamily, FsyncError, Method, Offsets, Plan, DEFAULT_FILE, DEFAULT_SIZES, QUICK_SIZES,
};

/// The flags of `iocap fsync`, as given.
#[derive(Debug, Clone)]
pub struct Request {
    /// A directory (the test file is made in it), a test file or a block device (on Windows a
    /// volume, `\\.\E:`, or a physical disk).
    pub target: String,
    pub sizes: Option<Vec<u64>>,
    pub methods: Option<Vec<Method>>,
    pub duration_s: Option<f64>,
    pub quick: bool,
    pub offsets: Offsets,
    pub profile: DbFamily,
    pub allow_overwrite: bool,
}

impl Request {
    /// The plan, defaults filled in; refuses a target that does not exist and a time per point
    /// outside (0 s, 1 h].
    pub fn plan(self) -> Result<Plan, FsyncError> {
        if std::fs::symlink_metadata(&self.target).is_err()
            && !iocap_platform::winstruct::names_device(&self.target)
        {
            return Err(FsyncError::Refused(format!(
                "{}: no such directory, file or device; give the directory the test file goes in \
                 (it is created there as {DEFAULT_FILE}), or a test file or device that exists",
                self.target
            )));
        }
        let duration_s = self
            .duration_s
            .unwrap_or(if self.quick { 1.0 } else { 2.0 });
        if !(duration_s > 0.0 && duration_s <= 3600.0) {
            return Err(FsyncError::Refused(
                "--duration must be more than 0 s and at most an hour per point".into(),
            ));
        }
        let default_sizes: &[u64] = if self.quick {
            &QUICK_SIZES
        } else {
            &DEFAULT_SIZES
        };
        Ok(Plan {
            target: self.target.into(),
            sizes: self.sizes.unwrap_or_else(|| default_sizes.to_vec()),
            methods: self.methods.unwrap_or_else(|| method::native().to_vec()),
            duration_s,
            offsets: self.offsets,
            profile: self.profile,
            allow_overwrite: self.allow_overwrite,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(target: &str) -> Request {
        Request {
            target: target.into(),
            sizes: None,
            methods: None,
            duration_s: None,
            quick: false,
            offsets: Offsets::Same,
            profile: DbFamily::Postgres,
            allow_overwrite: false,
        }
    }

    #[test]
    fn the_defaults_depend_on_quick() {
        let p = request(".").plan().unwrap();
        assert_eq!((p.duration_s, p.sizes.len()), (2.0, DEFAULT_SIZES.len()));
        assert_eq!(p.methods, method::native().to_vec());
        let p = Request {
            quick: true,
            ..request(".")
        }
        .plan()
        .unwrap();
        assert_eq!((p.duration_s, p.sizes), (1.0, QUICK_SIZES.to_vec()));
    }

    #[test]
    fn a_missing_target_or_a_silly_duration_is_refused() {
        let e = request("/nonexistent/iocap")
            .plan()
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such directory"), "{e}");
        for d in [0.0, 3601.0, f64::NAN] {
            let r = Request {
                duration_s: Some(d),
                ..request(".")
            };
            assert!(r.plan().is_err(), "{d}");
        }
    }
}
