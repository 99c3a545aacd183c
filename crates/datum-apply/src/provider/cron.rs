//! Cron entries: each Cron is the file `/etc/cron.d/datum-NAME`, written
//! as a File is (atomically, never through a link, its content shown as a
//! diff), owned by root and mode 0644, since cron skips a file in
//! `/etc/cron.d` that another user owns or others may write. cron notices
//! a changed file on its own: nothing is reloaded.

use super::fs::Files;
use super::{Context, Examined, Failure, Provider};
use crate::report::Change;
use crate::root::Root;
use crate::spec::{CronSpec, FileSpec};

pub struct Crons {
    files: Files,
}

impl Crons {
    pub fn new(root: Root) -> Crons {
        Crons {
            files: Files::new(root),
        }
    }
}

/// The File a Cron is.
fn file(s: &CronSpec) -> FileSpec {
    FileSpec {
        path: s.path(),
        ensure: s.ensure,
        owner: Some("root".into()),
        group: Some("root".into()),
        mode: Some(0o644),
        content: Some(s.content().into_bytes().into()),
        sensitive: false,
        secret: None,
    }
}

impl Provider<CronSpec> for Crons {
    fn examine(&self, s: &CronSpec, cx: &Context<'_>) -> Result<Examined, Failure> {
        self.files.examine(&file(s), cx)
    }

    fn converge(&self, s: &CronSpec, changes: &[Change], cx: &Context<'_>) -> Result<(), Failure> {
        self.files.converge(&file(s), changes, cx)
    }
}
