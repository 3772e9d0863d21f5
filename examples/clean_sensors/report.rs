//! The report: what every stage did to the rows and how fast, where each dropped row went, the sensors
//! with the most problems, and per-sensor statistics. The same structure comes out of both backends.
use crate::backend::Validity;
use std::fmt::Write as _;

/// One stage's line.
#[derive(Clone, Debug, PartialEq)]
pub struct StageLine {
    pub name: &'static str,
    /// The lookback calls it makes.
    pub calls: &'static str,
    pub rows_in: u64,
    /// Rows it passes on (for `stats`: sensors).
    pub rows_out: u64,
    /// What else it produced, in words.
    pub note: String,
    pub seconds: f64,
    /// Bytes read plus written (the model in `traffic.rs`).
    pub bytes: u64,
}

/// A host↔device copy (zero-cost on the host path).
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    pub what: &'static str,
    pub bytes: u64,
    pub seconds: f64,
}

/// Why the invalid rows were invalid (disjoint; they add up to the rows the validation dropped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Invalid {
    pub nan: u64,
    pub infinite: u64,
    pub sentinel: u64,
    pub out_of_range: u64,
}

impl Invalid {
    pub fn total(&self) -> u64 {
        self.nan + self.infinite + self.sentinel + self.out_of_range
    }
}

/// Aggregates of one sensor's accepted rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub min: f32,
    pub max: f32,
    /// Sum / count; the sum is accumulated in f32 (by `reduce_by_key`).
    pub mean: f64,
}

/// Where one sensor's rows went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SensorLine {
    pub sensor: u32,
    pub rows_in: u64,
    pub invalid: u64,
    pub duplicate: u64,
    pub stuck: u64,
    pub accepted: u64,
    /// `None` when none of its rows was accepted.
    pub stats: Option<Stats>,
}

impl SensorLine {
    pub fn problems(&self) -> u64 {
        self.invalid + self.duplicate + self.stuck
    }
}

/// Everything the pipeline found.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub backend: String,
    pub validity: Validity,
    pub stuck_run: u64,
    pub rows_in: u64,
    pub invalid: Invalid,
    pub duplicate: u64,
    pub stuck: u64,
    pub stuck_ranges: u64,
    pub accepted: u64,
    pub stages: Vec<StageLine>,
    pub transfers: Vec<Transfer>,
    /// Every sensor of the input, by id.
    pub sensors: Vec<SensorLine>,
}

/// `1234567` → `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 }
}

fn rate(bytes: u64, seconds: f64) -> String {
    if bytes > 0 && seconds > 0.0 { format!("{:.1}", bytes as f64 / seconds / 1e9) } else { "-".to_string() }
}

impl Report {
    /// The report as text: `top` problem sensors and the statistics of `show` sensors.
    pub fn render(&self, top: usize, show: usize) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail: the results are ignored throughout.
        let _ = self.write_stages(&mut out);
        let _ = self.write_accounting(&mut out);
        let _ = self.write_problem_sensors(&mut out, top);
        let _ = self.write_stats(&mut out, show);
        out
    }

    fn write_stages(&self, out: &mut String) -> std::fmt::Result {
        writeln!(out, "stages on the {}", self.backend)?;
        writeln!(out, "  {:<9} {:>13} {:>13} {:>10} {:>7}  note", "stage", "rows in", "rows out", "time ms", "GB/s")?;
        let mut total = 0.0;
        for s in &self.stages {
            total += s.seconds;
            let (rows_in, rows_out) = (count(s.rows_in), count(s.rows_out));
            let (ms, gbs) = (s.seconds * 1e3, rate(s.bytes, s.seconds));
            writeln!(out, "  {:<9} {rows_in:>13} {rows_out:>13} {ms:>10.3} {gbs:>7}  {}", s.name, s.note)?;
        }
        writeln!(out, "  {:<9} {:>13} {:>13} {:>10.3}", "total", "", "", total * 1e3)?;
        for t in &self.transfers {
            let mb = t.bytes as f64 / 1e6;
            let (ms, gbs) = (t.seconds * 1e3, rate(t.bytes, t.seconds));
            writeln!(out, "  {:<9} {mb:.1} MB in {ms:.3} ms ({gbs} GB/s)", t.what)?;
        }
        writeln!(out, "  GB/s: bytes read + written by the stage's calls (traffic.rs) / its time")?;
        writeln!(out, "  calls:")?;
        for s in &self.stages {
            writeln!(out, "    {:<9} {}", s.name, s.calls)?;
        }
        Ok(())
    }

    fn write_accounting(&self, out: &mut String) -> std::fmt::Result {
        let v = &self.validity;
        let i = &self.invalid;
        writeln!(out, "\nwhere the rows went")?;
        writeln!(out, "  {:<30} {:>13}", "input rows", count(self.rows_in))?;
        writeln!(
            out,
            "  {:<30} {:>13}  NaN/missing {}, infinite {}, sentinel {} {}, outside [{}, {}] {}",
            "- invalid",
            count(i.total()),
            count(i.nan),
            count(i.infinite),
            v.sentinel,
            count(i.sentinel),
            v.lo,
            v.hi,
            count(i.out_of_range)
        )?;
        writeln!(out, "  {:<30} {:>13}  same sensor and time as the row before", "- duplicate", count(self.duplicate))?;
        writeln!(
            out,
            "  {:<30} {:>13}  {} runs of more than {} equal readings of one sensor",
            "- stuck (quarantined)",
            count(self.stuck),
            count(self.stuck_ranges),
            self.stuck_run
        )?;
        writeln!(
            out,
            "  {:<30} {:>13}  {:.2} % of the input",
            "= accepted",
            count(self.accepted),
            percent(self.accepted, self.rows_in)
        )?;
        writeln!(out, "  every input row is counted exactly once (checked per sensor and in total)")
    }

    fn write_problem_sensors(&self, out: &mut String, top: usize) -> std::fmt::Result {
        let mut worst: Vec<&SensorLine> = self.sensors.iter().filter(|s| s.problems() > 0).collect();
        worst.sort_by(|a, b| b.problems().cmp(&a.problems()).then(a.sensor.cmp(&b.sensor)));
        let shown = worst.len().min(top);
        let (any, all) = (worst.len(), self.sensors.len());
        writeln!(out, "\nsensors with the most problems (top {top}; {any} of {all} sensors had any)")?;
        if shown == 0 {
            return writeln!(out, "  none");
        }
        writeln!(
            out,
            "  {:>9} {:>11} {:>9} {:>9} {:>9} {:>9}",
            "sensor", "rows", "invalid", "duplicate", "stuck", "problems"
        )?;
        for s in &worst[..shown] {
            writeln!(
                out,
                "  {:>9} {:>11} {:>9} {:>9} {:>9} {:>8.2}%",
                s.sensor,
                count(s.rows_in),
                count(s.invalid),
                count(s.duplicate),
                count(s.stuck),
                percent(s.problems(), s.rows_in)
            )?;
        }
        Ok(())
    }

    fn write_stats(&self, out: &mut String, show: usize) -> std::fmt::Result {
        let shown = self.sensors.len().min(show);
        let more = if shown < self.sensors.len() { "; --stats PATH writes all" } else { "" };
        writeln!(out, "\naccepted readings per sensor ({shown} of {} sensors, by id{more})", self.sensors.len())?;
        writeln!(out, "  {:>9} {:>11} {:>11} {:>11} {:>11}", "sensor", "count", "min", "max", "mean")?;
        for s in &self.sensors[..shown] {
            match s.stats {
                Some(st) => writeln!(
                    out,
                    "  {:>9} {:>11} {:>11} {:>11} {:>11.3}",
                    s.sensor,
                    count(s.accepted),
                    st.min,
                    st.max,
                    st.mean
                )?,
                None => writeln!(out, "  {:>9} {:>11}  (no accepted readings)", s.sensor, 0)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(50_000_000), "50,000,000");
    }
}
