//! Sets of item values as sorted intervals, and the set each leaf of a predicate selects.
//!
//! Every comparison leaf selects an interval of the item type's values, and NaN or not; `and`, `or` and
//! `not` are intersection, union and complement. So a predicate made of comparisons is a set of
//! intervals plus a NaN flag, whatever its shape (fold.rs computes it). Values are placed by an integer
//! *key* that orders them as the device compares them: integers by value, floats by their IEEE order,
//! with -0 and +0 at the same key (they compare equal) and NaN outside the order.
use super::Opcode;
use crate::element::Element;
use crate::kernels::DType;

/// The order of an item type's values (NaN excluded): keys `min..=max`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Order {
    pub(super) min: i128,
    pub(super) max: i128,
    /// Float types have NaN; integer types do not, and their sets never hold it.
    pub(super) float: bool,
    /// The sign bit of a float type, the bits of an integer type.
    sign: u64,
    mask: u64,
    signed: bool,
}

impl Order {
    pub(super) fn of<T: Element>() -> Order {
        let width = 8 * size_of::<T>() as u32;
        let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
        let sign = 1u64 << (width - 1);
        let float = !T::DTYPE.is_integer();
        let signed = matches!(T::DTYPE, DType::I8 | DType::I16 | DType::I32 | DType::I64);
        let (min, max) = if float {
            // +inf: all exponent bits set, no mantissa.
            let inf: u64 = match T::DTYPE {
                DType::F16 => 0x7c00,
                DType::Bf16 => 0x7f80,
                DType::F32 => 0x7f80_0000,
                _ => 0x7ff0_0000_0000_0000,
            };
            (-(inf as i128), inf as i128)
        } else if signed {
            (-(sign as i128), sign as i128 - 1)
        } else {
            (0, mask as i128)
        };
        Order { min, max, float, sign, mask, signed }
    }

    /// The key of `x`; None for NaN.
    pub(super) fn key<T: Element>(&self, x: T) -> Option<i128> {
        let b = x.to_bits() & self.mask;
        if !self.float {
            let negative = self.signed && b & self.sign != 0;
            return Some(if negative { b as i128 - (self.mask as i128 + 1) } else { b as i128 });
        }
        x.to_acc().partial_cmp(&x.to_acc())?;
        let magnitude = (b & !self.sign) as i128;
        Some(if b & self.sign != 0 { -magnitude } else { magnitude })
    }

    /// The value at key `k` (`min <= k <= max`); +0 for the zeros' key.
    pub(super) fn value<T: Element>(&self, k: i128) -> T {
        if self.float && k < 0 {
            return T::from_bits(self.sign | (-k) as u64);
        }
        T::from_bits(k as u64 & self.mask)
    }
}

/// A set of values: sorted, disjoint, non-adjacent closed intervals of keys, and whether NaN is in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Set {
    pub(super) ranges: Vec<(i128, i128)>,
    pub(super) nan: bool,
}

impl Set {
    fn empty() -> Set {
        Set { ranges: Vec::new(), nan: false }
    }

    fn interval(lo: i128, hi: i128) -> Set {
        Set { ranges: if lo <= hi { vec![(lo, hi)] } else { Vec::new() }, nan: false }
    }

    fn everything(o: &Order) -> Set {
        Set { ranges: vec![(o.min, o.max)], nan: o.float }
    }

    /// The set a leaf selects, with the device's semantics (`eval_leaf` in `cuda/core/predicate.cuh`):
    /// every comparison with NaN is false except `ne`. None for the bit tests, which are not intervals,
    /// and for combinators.
    pub(super) fn of_leaf<T: Element>(o: &Order, op: Opcode, a: T, b: T) -> Option<Set> {
        let (ka, kb) = (o.key(a), o.key(b));
        Some(match op {
            Opcode::True => Set::everything(o),
            Opcode::Lt => ka.map_or_else(Set::empty, |k| Set::interval(o.min, k - 1)),
            Opcode::Le => ka.map_or_else(Set::empty, |k| Set::interval(o.min, k)),
            Opcode::Gt => ka.map_or_else(Set::empty, |k| Set::interval(k + 1, o.max)),
            Opcode::Ge => ka.map_or_else(Set::empty, |k| Set::interval(k, o.max)),
            Opcode::Eq => ka.map_or_else(Set::empty, |k| Set::interval(k, k)),
            Opcode::Ne => ka.map_or_else(|| Set::everything(o), |k| Set::interval(k, k).not(o)),
            Opcode::Between => match (ka, kb) {
                (Some(ka), Some(kb)) => Set::interval(ka, kb),
                _ => Set::empty(),
            },
            Opcode::IsNan => Set { ranges: Vec::new(), nan: o.float },
            Opcode::IsFinite if o.float => Set::interval(o.min + 1, o.max - 1),
            Opcode::IsFinite => Set::everything(o),
            Opcode::AnyBits | Opcode::AllBits | Opcode::And | Opcode::Or | Opcode::Not => return None,
        })
    }

    /// The values of the type not in `self`.
    pub(super) fn not(&self, o: &Order) -> Set {
        let mut ranges = Vec::with_capacity(self.ranges.len() + 1);
        let mut next = o.min;
        for &(lo, hi) in &self.ranges {
            if lo > next {
                ranges.push((next, lo - 1));
            }
            next = hi + 1;
        }
        if next <= o.max {
            ranges.push((next, o.max));
        }
        Set { ranges, nan: o.float && !self.nan }
    }

    pub(super) fn and(&self, other: &Set) -> Set {
        let (mut ranges, mut i, mut j) = (Vec::new(), 0, 0);
        while i < self.ranges.len() && j < other.ranges.len() {
            let ((a0, a1), (b0, b1)) = (self.ranges[i], other.ranges[j]);
            let (lo, hi) = (a0.max(b0), a1.min(b1));
            if lo <= hi {
                ranges.push((lo, hi));
            }
            // The interval that ends first has no more overlaps.
            if a1 < b1 { i += 1 } else { j += 1 }
        }
        Set { ranges, nan: self.nan && other.nan }
    }

    pub(super) fn or(&self, other: &Set) -> Set {
        let mut ranges: Vec<(i128, i128)> = Vec::with_capacity(self.ranges.len() + other.ranges.len());
        let (mut i, mut j) = (0, 0);
        while i < self.ranges.len() || j < other.ranges.len() {
            let take_self = j == other.ranges.len() || (i < self.ranges.len() && self.ranges[i].0 <= other.ranges[j].0);
            let (lo, hi) = if take_self { self.ranges[i] } else { other.ranges[j] };
            if take_self {
                i += 1
            } else {
                j += 1
            }
            match ranges.last_mut() {
                // Overlapping or adjacent (no key between them): one interval.
                Some(last) if lo <= last.1 + 1 => last.1 = last.1.max(hi),
                _ => ranges.push((lo, hi)),
            }
        }
        Set { ranges, nan: self.nan || other.nan }
    }

    /// Whether the key `k` (None: NaN) is in the set.
    #[cfg(test)]
    pub(super) fn contains(&self, k: Option<i128>) -> bool {
        match k {
            None => self.nan,
            Some(k) => self.ranges.iter().any(|&(lo, hi)| lo <= k && k <= hi),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn roundtrip<T: Element>(values: &[T]) {
        let o = Order::of::<T>();
        let mut keys = Vec::new();
        for &x in values {
            let Some(k) = o.key(x) else { continue };
            assert!(o.min <= k && k <= o.max, "{x:?}: key {k} outside {}..={}", o.min, o.max);
            assert_eq!(o.value::<T>(k).to_acc().partial_cmp(&x.to_acc()), Some(std::cmp::Ordering::Equal));
            keys.push((k, x));
        }
        // Keys order values as the comparisons do.
        for &(ka, a) in &keys {
            for &(kb, b) in &keys {
                assert_eq!(ka.cmp(&kb), a.to_acc().partial_cmp(&b.to_acc()).unwrap(), "{a:?} vs {b:?}");
            }
        }
        assert_eq!(o.value::<T>(o.min).to_bits(), values[0].to_bits(), "min is the type's lowest value");
    }

    #[test]
    fn keys_order_values_as_the_device_compares_them() {
        roundtrip::<i8>(&[i8::MIN, -1, 0, 1, i8::MAX]);
        roundtrip::<u16>(&[0, 1, 300, u16::MAX]);
        roundtrip::<i64>(&[i64::MIN, -1, 0, i64::MAX]);
        roundtrip::<u64>(&[0, u64::MAX - 1, u64::MAX]);
        roundtrip::<f32>(&[
            f32::NEG_INFINITY,
            -f32::MAX,
            -1.0,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            1.0,
            f32::INFINITY,
            f32::NAN,
        ]);
        roundtrip::<f64>(&[f64::NEG_INFINITY, -1e-310, -0.0, 0.0, 5e-324, f64::INFINITY]);
        roundtrip::<f16>(&[f16::NEG_INFINITY, f16::from_f32(-1.0), f16::NEG_ZERO, f16::ZERO, f16::MAX, f16::INFINITY]);
        roundtrip::<bf16>(&[bf16::NEG_INFINITY, bf16::NEG_ZERO, bf16::ZERO, bf16::from_f32(2.0), bf16::INFINITY]);
    }

    #[test]
    fn set_algebra_follows_the_booleans() {
        let o = Order::of::<i8>();
        let sets = [
            Set::interval(-128, -1),
            Set::interval(0, 0),
            Set::interval(5, 9).or(&Set::interval(20, 127)),
            Set::interval(-3, 3).not(&o),
            Set::empty(),
            Set::everything(&o),
        ];
        for a in &sets {
            assert_eq!(&a.not(&o).not(&o), a);
            for b in &sets {
                let (and, or) = (a.and(b), a.or(b));
                for k in -128..=127 {
                    let (x, y) = (a.contains(Some(k)), b.contains(Some(k)));
                    assert_eq!(and.contains(Some(k)), x && y);
                    assert_eq!(or.contains(Some(k)), x || y);
                }
                // Canonical: sorted, disjoint, not adjacent.
                for r in [&and.ranges, &or.ranges] {
                    assert!(r.windows(2).all(|w| w[0].1 + 1 < w[1].0), "{r:?}");
                }
            }
        }
    }
}
