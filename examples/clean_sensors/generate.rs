//! A synthetic sensor log with realistic faults, deterministic for a seed. One pass, O(rows), sensor by
//! sensor in (sensor, time) order, so it streams straight into the columns.
//!
//! Each sensor samples at a fixed period a daily cycle plus slowly wandering noise, quantized to 0.01
//! (sensors report at a fixed resolution). Faults, per row:
//! * NaN (a missed reading) 0.2 %, the sentinel −9999 0.1 %, an out-of-range spike 0.05 %;
//! * a duplicate: the previous row sent again, same time and value, 0.1 %;
//! * a stuck episode starts with probability 1/100,000 and repeats the last reading for 60..2,000 rows
//!   (cut short at the sensor's last row).
//!
//! Natural repeats stay short: consecutive readings differ by noise of σ ≈ 0.3 at a 0.01 resolution, so
//! a run of 50 equal values occurs only by a fault.
use crate::progress::Progress;
use crate::table::{self, Table};

pub const SENTINEL: f32 = -9999.0;
const P_NAN: f64 = 0.002;
const P_SENTINEL: f64 = 0.001;
const P_SPIKE: f64 = 0.0005;
const P_DUPLICATE: f64 = 0.001;
const P_STUCK: f64 = 1.0 / 100_000.0;
const STUCK_ROWS: (u64, u64) = (60, 2_000);
/// Rows per sensor when `--sensors` is not given.
pub const ROWS_PER_SENSOR: usize = 25_000;
/// 2023-11-14 22:13:20 UTC: the log's epoch.
const START: i64 = 1_700_000_000;
const DAY: f64 = 86_400.0;

/// What the generator put in, to set beside what the pipeline found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Injected {
    pub nan: u64,
    pub sentinel: u64,
    pub spike: u64,
    pub duplicate: u64,
    pub stuck_episodes: u64,
    pub stuck_rows: u64,
}

/// xorshift64*: fast, seedable, and good enough for synthetic data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// Roughly standard normal (Irwin–Hall of four uniforms, rescaled): cheap, and the tails do not matter.
    pub fn normal(&mut self) -> f64 {
        (self.unit() + self.unit() + self.unit() + self.unit() - 2.0) * 3f64.sqrt()
    }
}

/// Generates `rows` rows over `sensors` sensors (ids 1000, 1001, …), the first `rows % sensors` of them
/// one row longer.
pub fn generate(rows: usize, sensors: usize, seed: u64, progress: &Progress) -> (Table, Injected) {
    let mut table = Table::with_capacity(rows);
    let mut injected = Injected::default();
    let mut rng = Rng::new(seed);
    let bar = progress.rows("generating", rows as u64);
    let sensors = sensors.clamp(1, rows.max(1));
    for s in 0..sensors {
        let quota = rows / sensors + usize::from(s < rows % sensors);
        Sensor::new(1000 + s as u32, &mut rng).emit(quota, &mut rng, &mut table, &mut injected);
        bar.inc(quota as u64);
    }
    bar.finish_and_clear();
    (table, injected)
}

/// One sensor's character: when it starts, how often it samples, what its signal looks like.
struct Sensor {
    id: u32,
    period: i64,
    start: i64,
    base: f64,
    amplitude: f64,
    phase: f64,
}

impl Sensor {
    fn new(id: u32, rng: &mut Rng) -> Self {
        Sensor {
            id,
            period: [10, 15, 30, 60][(rng.next_u64() % 4) as usize],
            start: START + (rng.next_u64() % 3_600) as i64,
            base: rng.range(-10.0, 30.0),
            amplitude: rng.range(2.0, 10.0),
            phase: rng.range(0.0, std::f64::consts::TAU),
        }
    }

    fn emit(&self, quota: usize, rng: &mut Rng, table: &mut Table, injected: &mut Injected) {
        let (mut time, mut wander) = (self.start, 0.0);
        let (mut stuck_left, mut stuck_value) = (0u64, 0.0f32);
        let mut previous: Option<(u64, f32)> = None;
        for _ in 0..quota {
            if let Some((key, value)) = previous.filter(|_| rng.unit() < P_DUPLICATE) {
                injected.duplicate += 1;
                table.push(key, value);
                continue;
            }
            time += self.period;
            wander = 0.95 * wander + 0.3 * rng.normal();
            let cycle = (time as f64 / DAY * std::f64::consts::TAU + self.phase).sin();
            let mut value = quantize(self.base + self.amplitude * cycle + wander);
            if stuck_left == 0 && rng.unit() < P_STUCK {
                injected.stuck_episodes += 1;
                stuck_left = STUCK_ROWS.0 + rng.next_u64() % (STUCK_ROWS.1 - STUCK_ROWS.0);
                stuck_value = value;
            }
            if stuck_left > 0 {
                // A stuck sensor repeats itself and nothing else: no other faults meanwhile.
                stuck_left -= 1;
                injected.stuck_rows += 1;
                value = stuck_value;
            } else {
                let r = rng.unit();
                if r < P_NAN {
                    injected.nan += 1;
                    value = f32::NAN;
                } else if r < P_NAN + P_SENTINEL {
                    injected.sentinel += 1;
                    value = SENTINEL;
                } else if r < P_NAN + P_SENTINEL + P_SPIKE {
                    injected.spike += 1;
                    // Saturated or glitched converters: far above, or well below, any plausible reading.
                    value = if rng.unit() < 0.5 { rng.range(2_000.0, 30_000.0) } else { rng.range(-5_000.0, -200.0) }
                        as f32;
                }
            }
            // Times stay within a few years of 2023 and ids below 2^24, so the key always packs.
            let key = table::pack(self.id, time).unwrap_or_default();
            table.push(key, value);
            previous = Some((key, value));
        }
    }
}

/// Rounds to the sensor resolution of 0.01.
fn quantize(x: f64) -> f32 {
    ((x * 100.0).round() / 100.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_sorted_and_faulty() {
        let (a, injected) = generate(300_000, 7, 42, &Progress::new(false));
        let (b, _) = generate(300_000, 7, 42, &Progress::new(false));
        let (c, _) = generate(300_000, 7, 43, &Progress::new(false));
        assert_eq!(a.len(), 300_000);
        // Bitwise equality (NaN != NaN as floats).
        let bits = |t: &Table| t.value.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!((a.key == b.key, bits(&a) == bits(&b)), (true, true));
        assert_ne!(bits(&a), bits(&c));
        assert!(a.key.windows(2).all(|w| w[0] <= w[1]), "sorted by sensor, then time");
        let per_sensor = |id| a.sensor.iter().filter(|&&s| s == id).count();
        assert_eq!((per_sensor(1000), per_sensor(1006)), (42_858, 42_857));
        assert!(injected.nan > 300 && injected.duplicate > 150 && injected.sentinel > 150 && injected.spike > 50);
        // A duplicate may re-send a NaN row.
        let nan = a.value.iter().filter(|v| v.is_nan()).count() as u64;
        assert!((injected.nan..=injected.nan + injected.duplicate).contains(&nan));
    }
}
