//! Progress bars on stderr (indicatif): for loading, generating and writing rows, and for the stages.
//! indicatif draws nothing when stderr is not a terminal, and `--quiet` hides them everywhere, so the
//! report on stdout stays clean either way.
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// Makes the bars (or hidden ones).
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    shown: bool,
}

impl Progress {
    pub fn new(shown: bool) -> Self {
        Progress { shown }
    }

    fn bar(&self, total: u64, template: &str) -> ProgressBar {
        if !self.shown {
            return ProgressBar::hidden();
        }
        // The templates are constants, so a bad one is a bug here; fall back to the default style
        // rather than panic.
        let style = ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar());
        let bar = ProgressBar::new(total).with_style(style.progress_chars("=> "));
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// A bar over the bytes of a file.
    pub fn bytes(&self, what: &'static str, total: u64) -> ProgressBar {
        let bar =
            self.bar(total, "{msg:>10} [{bar:40}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta})");
        bar.set_message(what);
        bar
    }

    /// A bar over rows.
    pub fn rows(&self, what: &'static str, total: u64) -> ProgressBar {
        let bar = self.bar(total, "{msg:>10} [{bar:40}] {human_pos}/{human_len} rows ({elapsed}, eta {eta})");
        bar.set_message(what);
        bar
    }

    /// A bar over the batches of batch mode.
    pub fn batches(&self, total: u64) -> ProgressBar {
        self.bar(total, "   batches [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})")
    }

    /// A bar over the pipeline's stages; the message names the running one.
    pub fn stages(&self, total: u64) -> ProgressBar {
        self.bar(total, "{prefix:>10} [{bar:40}] stage {pos}/{len}: {msg} ({elapsed})")
    }
}
