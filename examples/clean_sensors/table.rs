//! The readings as host columns, and the packed row key that carries each row's sensor and time.
//!
//! The key is `sensor << 40 | (time + 2^39)`: 24 bits of sensor id over 40 bits of biased time. It is
//! exact for sensor ids below 2^24 and times within ±2^39 s (±17,000 years) of 1970, and it orders rows
//! exactly as (sensor, time) does, so a sorted log has non-decreasing keys. The pipeline's duplicate
//! stage compares this one 64-bit column (`unique_by_key`) instead of two; the timestamp travels inside
//! it, so the device holds sensor (4 B) + key (8 B) + value (4 B) = 16 bytes a row, the same as sensor +
//! time + value would.

/// Bits of the key that hold the (biased) time.
const TIME_BITS: u32 = 40;
/// Added to the time so that times before 1970 pack as well (the CO2 sample starts in 1958).
const TIME_BIAS: i64 = 1 << (TIME_BITS - 1);
/// Largest sensor id the key holds.
pub const MAX_SENSOR: u32 = (1 << (64 - TIME_BITS)) - 1;
/// Times must lie in `-MAX_TIME_ABS..MAX_TIME_ABS` seconds.
pub const MAX_TIME_ABS: i64 = TIME_BIAS;

/// Why a (sensor, time) pair does not fit the packed key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The sensor id needs more than 24 bits.
    #[error("sensor_id {0} is above {MAX_SENSOR} (the packed row key holds 24-bit sensor ids)")]
    Sensor(u32),
    /// The time is more than 2^39 s from 1970.
    #[error("timestamp {0} is more than 2^39 s (about 17,000 years) from 1970")]
    Time(i64),
}

/// Packs (sensor, time) into the row key.
pub fn pack(sensor: u32, time: i64) -> Result<u64, KeyError> {
    if sensor > MAX_SENSOR {
        return Err(KeyError::Sensor(sensor));
    }
    if !(-MAX_TIME_ABS..MAX_TIME_ABS).contains(&time) {
        return Err(KeyError::Time(time));
    }
    Ok((u64::from(sensor) << TIME_BITS) | (time + TIME_BIAS) as u64)
}

/// The (sensor, time) a key was packed from.
pub fn unpack(key: u64) -> (u32, i64) {
    ((key >> TIME_BITS) as u32, (key & ((1 << TIME_BITS) - 1)) as i64 - TIME_BIAS)
}

/// Readings as three columns of equal length, in (sensor, time) order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Sensor id of each row (also inside `key`; kept as its own column because the per-sensor stages
    /// need runs of equal sensors, which the key does not have).
    pub sensor: Vec<u32>,
    /// Packed (sensor, time) of each row.
    pub key: Vec<u64>,
    /// The reading. `f32`, not f64: a sensor resolves a handful of significant digits, and any decimal
    /// of up to 6 significant digits survives f32 and prints back as written, at half the bytes.
    pub value: Vec<f32>,
}

impl Table {
    pub fn with_capacity(rows: usize) -> Self {
        Table { sensor: Vec::with_capacity(rows), key: Vec::with_capacity(rows), value: Vec::with_capacity(rows) }
    }

    pub fn len(&self) -> usize {
        self.value.len()
    }

    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Appends a row whose key is already packed.
    pub fn push(&mut self, key: u64, value: f32) {
        self.sensor.push(unpack(key).0);
        self.key.push(key);
        self.value.push(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_round_trips_and_orders_like_sensor_then_time() {
        let pairs = [(0, -MAX_TIME_ABS), (0, 0), (1, -371_174_400), (1, 1_700_000_000), (MAX_SENSOR, MAX_TIME_ABS - 1)];
        let keys: Vec<u64> = pairs.iter().map(|&(s, t)| pack(s, t).unwrap()).collect();
        for (&k, &p) in keys.iter().zip(&pairs) {
            assert_eq!(unpack(k), p);
        }
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(pack(MAX_SENSOR + 1, 0), Err(KeyError::Sensor(MAX_SENSOR + 1)));
        assert_eq!(pack(1, MAX_TIME_ABS), Err(KeyError::Time(MAX_TIME_ABS)));
        assert_eq!(pack(1, -MAX_TIME_ABS - 1), Err(KeyError::Time(-MAX_TIME_ABS - 1)));
    }
}
