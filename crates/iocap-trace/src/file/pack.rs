//! The integer coding under a chunk: varints, and columns of integers bit-packed in blocks.
//!
//! A column is cut into blocks of [`BLOCK`] values. Each block stores its minimum (a zig-zag
//! varint), then a shift and a width, then every value's distance from the minimum, shifted
//! right by the bits all distances share at the bottom, in `width` bits, packed from the least
//! significant bit up. The width is the one that costs least when the few values wider than it
//! are stored apart as exceptions (the width byte's top bit says there are some: a varint
//! count, then for each its index in the block and its high bits as a varint). A column that
//! does not change costs a few bytes a block; one whose values are all multiples of 16 (sectors
//! of 8 KiB requests) loses those four bits; a latency spike costs its own few bytes, not a
//! wider block. This is patched frame-of-reference coding, as column stores use: it brings
//! random offsets and ns times near their entropy, which lz4 alone (no entropy coder) cannot.
//! Arithmetic is wrapping, so every `i64` round-trips.

/// Values per block.
pub const BLOCK: usize = 128;

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// Bits needed for `x`.
fn bit_len(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// The width that packs the block's values (`x`, their bit lengths counted in `lens`) in the
/// fewest bits, the wider ones as exceptions: a byte of index and a varint of the high bits.
fn best_width(lens: &[u32; 65], max: u32, n: usize) -> u32 {
    // the bit lengths present, a few of the 65: each width's cost sums over them alone
    let mut present = [(0u32, 0u32); 65];
    let mut k = 0;
    for (b, &count) in lens.iter().enumerate().take(max as usize + 1) {
        if count > 0 {
            present[k] = (b as u32, count);
            k += 1;
        }
    }
    let present = &present[..k];
    let mut best = (n as u64 * u64::from(max), max);
    for w in 0..max {
        let mut cost = n as u64 * u64::from(w);
        for &(b, count) in present.iter().filter(|&&(b, _)| b > w) {
            cost += u64::from(count) * (8 + 8 * u64::from((b - w).div_ceil(7)));
        }
        if cost < best.0 {
            best = (cost, w);
        }
    }
    best.1
}

/// Appends `vals` as blocks.
pub fn pack_column(vals: &[i64], out: &mut Vec<u8>) {
    for block in vals.chunks(BLOCK) {
        let min = block.iter().copied().min().unwrap_or(0);
        let any = block
            .iter()
            .fold(0u64, |acc, &v| acc | v.wrapping_sub(min) as u64);
        let shift = if any == 0 { 0 } else { any.trailing_zeros() };
        let x = |v: i64| v.wrapping_sub(min) as u64 >> shift;
        // four counts by turns, summed after: one count's increments would wait on each other
        // (most values have the same bit length), which was most of the writer's time
        let mut part = [[0u32; 65]; 4];
        for (i, &v) in block.iter().enumerate() {
            part[i & 3][bit_len(x(v)) as usize] += 1;
        }
        let mut lens = [0u32; 65];
        for (b, l) in lens.iter_mut().enumerate() {
            *l = part[0][b] + part[1][b] + part[2][b] + part[3][b];
        }
        let max = bit_len(any >> shift);
        let width = best_width(&lens, max, block.len());
        let exceptions = lens[width as usize + 1..].iter().sum::<u32>();
        put_varint(out, zigzag(min));
        out.push(width as u8 | if exceptions > 0 { 0x80 } else { 0 });
        out.push(shift as u8);
        if exceptions > 0 {
            put_varint(out, u64::from(exceptions));
            for (i, &v) in block.iter().enumerate() {
                if bit_len(x(v)) > width {
                    out.push(i as u8);
                    put_varint(out, x(v) >> width);
                }
            }
        }
        if width == 0 {
            continue;
        }
        let mask = u64::MAX >> (64 - width);
        let mut acc: u128 = 0;
        let mut bits = 0u32;
        for &v in block {
            acc |= u128::from(x(v) & mask) << bits;
            bits += width;
            if bits >= 64 {
                out.extend_from_slice(&(acc as u64).to_le_bytes());
                acc >>= 64;
                bits -= 64;
            }
        }
        let tail = bits.div_ceil(8) as usize;
        out.extend_from_slice(&(acc as u64).to_le_bytes()[..tail]);
    }
}

/// Reads what [`pack_column`] wrote for `n` values.
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0 }
    }

    pub fn at_end(&self) -> bool {
        self.pos == self.buf.len()
    }

    pub fn byte(&mut self) -> Result<u8, String> {
        let b = *self.buf.get(self.pos).ok_or("the payload ends early")?;
        self.pos += 1;
        Ok(b)
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or("the payload ends early")?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            if i == 9 && b > 1 {
                break;
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err("a number is longer than 64 bits".into())
    }

    /// Appends `n` values to `out`.
    pub fn column(&mut self, n: usize, out: &mut Vec<i64>) -> Result<(), String> {
        out.clear();
        let mut high = Vec::new();
        while out.len() < n {
            let len = (n - out.len()).min(BLOCK);
            let min = unzigzag(self.varint()?);
            let (flagged, shift) = (self.byte()?, u32::from(self.byte()?));
            let width = u32::from(flagged & 0x7f);
            if width > 64 || shift > 63 {
                return Err(format!(
                    "a block's width {width} or shift {shift} is impossible"
                ));
            }
            high.clear();
            if flagged & 0x80 != 0 {
                let count = self.varint()?;
                if count > len as u64 {
                    return Err(format!("a block of {len} claims {count} exceptions"));
                }
                for _ in 0..count {
                    let (i, h) = (usize::from(self.byte()?), self.varint()?);
                    if i >= len || width >= 64 || (h << width) >> width != h {
                        return Err(format!("a block's exception {i} ({h}) is impossible"));
                    }
                    high.push((i, h << width));
                }
            }
            let start = out.len();
            let bytes = self.take((len * width as usize).div_ceil(8))?;
            unpack(bytes, len, width, |x| out.push(x as i64));
            for &(i, h) in &high {
                out[start + i] |= h as i64;
            }
            for v in &mut out[start..] {
                *v = min.wrapping_add(((*v as u64) << shift) as i64);
            }
        }
        Ok(())
    }
}

fn unpack(bytes: &[u8], len: usize, width: u32, mut put: impl FnMut(u64)) {
    if width == 0 {
        (0..len).for_each(|_| put(0));
        return;
    }
    let mask = (1u128 << width) - 1;
    let mut acc: u128 = 0;
    let mut bits = 0u32;
    let mut next = bytes.iter();
    for _ in 0..len {
        while bits < width {
            // the caller took exactly enough bytes for len values of this width
            acc |= u128::from(*next.next().unwrap_or(&0)) << bits;
            bits += 8;
        }
        put((acc & mask) as u64);
        acc >>= width;
        bits -= width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(vals: &[i64]) -> usize {
        let mut buf = Vec::new();
        pack_column(vals, &mut buf);
        let mut out = Vec::new();
        let mut c = Cursor::new(&buf);
        c.column(vals.len(), &mut out).unwrap();
        assert!(c.at_end());
        assert_eq!(out, vals);
        buf.len()
    }

    #[test]
    fn columns_round_trip_extremes() {
        round_trip(&[]);
        round_trip(&[0]);
        round_trip(&[i64::MIN, i64::MAX, 0, -1, 1]);
        round_trip(&(0..1000).map(|i| i * 7919 - 3_000_000).collect::<Vec<_>>());
        let wild: Vec<i64> = (0..300u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) as i64)
            .collect();
        round_trip(&wild);
    }

    #[test]
    fn constant_and_aligned_columns_are_small() {
        // 1000 equal values: the value (3 bytes), width and shift, in each of 8 blocks
        assert_eq!(round_trip(&[8192; 1000]), 8 * 5);
        // multiples of 16 below 2^20: 16 bits a value, not 20
        let aligned: Vec<i64> = (0..128).map(|i| (i * 40_503 % 65_536) * 16).collect();
        assert_eq!(round_trip(&aligned), 1 + 2 + 128 * 16 / 8);
        // one spike among small values: an exception, not 128 wide values
        let mut spiky: Vec<i64> = (0..128).map(|i| 80_000 + i * 100).collect();
        spiky[77] = 5_000_000;
        let size = round_trip(&spiky);
        assert!(size < 3 + 2 + 5 + 128 * 14 / 8, "{size} bytes");
    }

    #[test]
    fn varints_round_trip() {
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(Cursor::new(&b).varint().unwrap(), v);
        }
        for v in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert!(Cursor::new(&[0xff; 11]).varint().is_err());
        assert!(Cursor::new(&[0x80]).varint().is_err());
    }
}
