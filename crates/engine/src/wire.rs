//! [`Wire`]: the byte form of a vertex program's message, for executors
//! whose ranks do not share memory (the distributed executor,
//! `crates/dist`).
//!
//! Every [`crate::program::VertexProgram::Msg`] implements it. The form is
//! little-endian, self-delimiting (a reader knows where a value ends
//! without a length prefix around it), and only ever read back by the same
//! build of Plexus: it is a transport encoding, not a storage format.
//! `decode(encode(m)) == m` bit for bit (floats keep their bits, NaNs
//! included).

/// A value with a byte form (see the module docs).
pub trait Wire: Sized {
    /// Appends the bytes of `self` to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Reads one value from the front of `input` and advances it past the
    /// value's bytes; `None` when the bytes do not hold one (truncated or
    /// malformed input), with `input` left anywhere.
    fn decode(input: &mut &[u8]) -> Option<Self>;
}

/// The first `n` bytes of `input`, which advances past them.
#[inline]
fn take<'a>(input: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if input.len() < n {
        return None;
    }
    let (head, tail) = input.split_at(n);
    *input = tail;
    Some(head)
}

macro_rules! wire_le {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn decode(input: &mut &[u8]) -> Option<Self> {
                let b = take(input, std::mem::size_of::<$t>())?;
                Some(<$t>::from_le_bytes(b.try_into().ok()?))
            }
        }
    )*};
}
wire_le!(u8, u16, u32, u64, i32, i64, f32, f64);

impl Wire for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        match u8::decode(input)? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Wire for () {
    fn encode(&self, _out: &mut Vec<u8>) {}
    fn decode(_input: &mut &[u8]) -> Option<Self> {
        Some(())
    }
}

impl<T: Wire> Wire for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(x) => {
                out.push(1);
                x.encode(out);
            }
        }
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        match u8::decode(input)? {
            0 => Some(None),
            1 => Some(Some(T::decode(input)?)),
            _ => None,
        }
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
        self.1.encode(out);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some((A::decode(input)?, B::decode(input)?))
    }
}

impl<T: Wire> Wire for Vec<T> {
    /// A `u64` length, then the elements.
    fn encode(&self, out: &mut Vec<u8>) {
        (self.len() as u64).encode(out);
        for x in self {
            x.encode(out);
        }
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let n = usize::try_from(u64::decode(input)?).ok()?;
        // Every element takes at least one byte except zero-sized ones;
        // bound the reservation by the input so a bad length cannot
        // allocate without limit.
        let mut v = Vec::with_capacity(n.min(input.len()));
        for _ in 0..n {
            v.push(T::decode(input)?);
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round<T: Wire + PartialEq + std::fmt::Debug>(x: T) {
        let mut b = Vec::new();
        x.encode(&mut b);
        let mut s = &b[..];
        assert_eq!(T::decode(&mut s), Some(x));
        assert!(s.is_empty());
        // Every strict prefix is refused.
        for cut in 0..b.len() {
            let mut s = &b[..cut];
            assert_eq!(T::decode(&mut s), None, "prefix {cut} of {b:?}");
        }
    }

    #[test]
    fn values_round_trip_and_prefixes_are_refused() {
        round(7u32);
        round(-0.0f64);
        round(f64::INFINITY);
        round(Some((3u64, 4u32)));
        round(None::<u32>);
        round(vec![(1u32, 2u32), (3, 4)]);
        round((9u8, 2.5f64));
        round(true);
        let mut s: &[u8] = &[2];
        assert_eq!(bool::decode(&mut s), None);
        let mut s: &[u8] = &[u8::MAX; 8];
        assert_eq!(Vec::<u32>::decode(&mut s), None);
    }
}
