//! Deterministic per-purpose random streams derived from an experiment seed and a label,
//! drawn by the generator of the session's analysis: ChaCha8 (analysis 1) or xoshiro256++
//! (analysis 2).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// FNV-1a 64-bit hash (Fowler, Noll & Vo; parameters from the IETF draft
/// draft-eastlake-fnv, §2: offset basis 0xcbf29ce484222325, prime 0x100000001b3).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// One step of SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014, Fig. 1; constants as in Vigna's reference `splitmix64.c`).
/// Advances `state` and returns the mixed output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The generator an analysis draws its resamples from. A session records its analysis
/// (manifest `analysis`) and is read with that analysis's generator for good, so that no
/// published interval changes when lab changes its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Generator {
    /// Analysis 1: ChaCha8 (Bernstein 2008), through `rand_chacha`.
    #[serde(rename = "chacha8")]
    ChaCha8,
    /// Analyses 2 and 3: xoshiro256++ (Blackman & Vigna, "Scrambled linear pseudorandom
    /// number generators", ACM TOMS 47(4), 2021), about twice as fast per resampled mean.
    #[serde(rename = "xoshiro256++")]
    Xoshiro256PlusPlus,
}

impl Generator {
    /// The generator of analysis `analysis`, `None` for one this lab does not know.
    pub fn of_analysis(analysis: u32) -> Option<Generator> {
        match analysis {
            1 => Some(Generator::ChaCha8),
            2 | 3 => Some(Generator::Xoshiro256PlusPlus),
            _ => None,
        }
    }

    /// Whether this is analysis 1's generator (left out of analysis.json, as before there
    /// was a choice).
    pub fn is_first(&self) -> bool {
        *self == Generator::ChaCha8
    }
}

/// A seeded stream of 32-bit words from one [`Generator`].
// Unboxed: a stream is made once per purpose and read millions of times, each read through
// the variant; the 300 bytes of ChaCha8's buffer cost nothing where it lives, on the stack.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Stream {
    ChaCha8(ChaCha8Rng),
    Xoshiro(Xoshiro256PlusPlus),
}

/// An analysis-1 stream for one purpose (`label`, e.g. a cell name) of the experiment `seed`:
/// [`stream_of`] with ChaCha8.
pub fn stream(seed: u64, label: &str) -> Stream {
    stream_of(Generator::ChaCha8, seed, label)
}

/// A stream of `generator` for one purpose (`label`) of the experiment `seed`.
///
/// Its 256-bit key (ChaCha8) or state (xoshiro256++, seeded as its authors advise) is four
/// SplitMix64 outputs from the state `seed ^ fnv1a64(label)`, so it only depends on integer
/// arithmetic and the UTF-8 bytes of the label: stable across platforms and Rust versions
/// (either generator's output for a given key is fixed by its algorithm).
pub fn stream_of(generator: Generator, seed: u64, label: &str) -> Stream {
    let mut state = seed ^ fnv1a64(label.as_bytes());
    let words: [u64; 4] = std::array::from_fn(|_| splitmix64(&mut state));
    match generator {
        Generator::ChaCha8 => {
            let mut key = [0u8; 32];
            for (chunk, word) in key.chunks_exact_mut(8).zip(words) {
                chunk.copy_from_slice(&word.to_le_bytes());
            }
            Stream::ChaCha8(ChaCha8Rng::from_seed(key))
        }
        Generator::Xoshiro256PlusPlus => Stream::Xoshiro(Xoshiro256PlusPlus::new(words)),
    }
}

impl RngCore for Stream {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        match self {
            Stream::ChaCha8(r) => r.next_u32(),
            Stream::Xoshiro(x) => x.next_word(),
        }
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        match self {
            Stream::ChaCha8(r) => r.next_u64(),
            Stream::Xoshiro(x) => x.next_u64(),
        }
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        match self {
            Stream::ChaCha8(r) => r.fill_bytes(dest),
            Stream::Xoshiro(x) => x.fill_bytes(dest),
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

/// xoshiro256++ (Blackman & Vigna 2021, the authors' reference `xoshiro256plusplus.c`), read
/// as a stream of 32-bit words: the low half of each 64-bit output, then its high half.
#[derive(Debug, Clone)]
pub struct Xoshiro256PlusPlus {
    s: [u64; 4],
    /// The high half of the last output, when its low half was the last word taken.
    half: Option<u32>,
}

impl Xoshiro256PlusPlus {
    /// The generator in state `s` (not all zero).
    pub fn new(s: [u64; 4]) -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus { s, half: None }
    }

    /// The next 64-bit output (`next()` of the reference code).
    #[inline(always)]
    pub fn next_output(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// The next 32-bit word.
    #[inline(always)]
    pub fn next_word(&mut self) -> u32 {
        if let Some(high) = self.half.take() {
            return high;
        }
        let w = self.next_output();
        self.half = Some((w >> 32) as u32);
        w as u32
    }

    /// Whether the next word is the high half of an output already drawn.
    #[inline(always)]
    pub fn mid_output(&self) -> bool {
        self.half.is_some()
    }

    /// The next eight words: four outputs' halves, or when [`Self::mid_output`], the high
    /// half pending, three outputs and the low half of a fourth (its high half then pending).
    #[inline(always)]
    pub fn next_eight_words(&mut self) -> [u32; 8] {
        let lo = |w: u64| w as u32;
        let hi = |w: u64| (w >> 32) as u32;
        match self.half.take() {
            None => {
                let [a, b, c, d] = [(); 4].map(|_| self.next_output());
                [lo(a), hi(a), lo(b), hi(b), lo(c), hi(c), lo(d), hi(d)]
            }
            Some(high) => {
                let [a, b, c, d] = [(); 4].map(|_| self.next_output());
                self.half = Some(hi(d));
                [high, lo(a), hi(a), lo(b), hi(b), lo(c), hi(c), lo(d)]
            }
        }
    }
}

/// The words in order: a 64-bit draw is two words, the first its low half; bytes are the
/// words' little-endian bytes (a last partial word's unused bytes are dropped).
impl RngCore for Xoshiro256PlusPlus {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.next_word()
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        u64::from(self.next_word()) | u64::from(self.next_word()) << 32
    }

    fn fill_bytes(&mut self, mut dest: &mut [u8]) {
        if self.mid_output() && dest.len() >= 4 {
            let (first, rest) = dest.split_at_mut(4);
            first.copy_from_slice(&self.next_word().to_le_bytes());
            dest = rest;
        }
        // Between outputs, an output's little-endian bytes are its low word's, then its high.
        let mut eights = dest.chunks_exact_mut(8);
        for chunk in &mut eights {
            chunk.copy_from_slice(&self.next_output().to_le_bytes());
        }
        let mut chunks = eights.into_remainder().chunks_exact_mut(4);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_word().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let word = self.next_word().to_le_bytes();
            rest.copy_from_slice(&word[..rest.len()]);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn fnv1a64_published_vectors() {
        // Test vectors from draft-eastlake-fnv (FNV-1a 64): "" and "a" and "foobar".
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn splitmix64_reference_vector() {
        // Vigna's splitmix64.c seeded with 1234567: first outputs.
        let mut s = 1_234_567u64;
        assert_eq!(splitmix64(&mut s), 6_457_827_717_110_365_317);
        assert_eq!(splitmix64(&mut s), 3_203_168_211_198_807_973);
    }

    #[test]
    fn streams_are_stable_and_distinct() {
        let a1 = stream(42, "cell/a").next_u64();
        let a2 = stream(42, "cell/a").next_u64();
        let b = stream(42, "cell/b").next_u64();
        let c = stream(43, "cell/a").next_u64();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
        // Pinned output: any change to the key derivation or to rand_chacha's ChaCha8
        // stream would silently change every bootstrap interval lab has ever reported.
        let mut r = stream(42, "cell/a");
        assert_eq!(r.next_u64(), 5_920_075_144_286_679_865);
        assert_eq!(r.next_u64(), 13_472_892_096_963_487_345);
    }

    #[test]
    fn xoshiro256plusplus_matches_the_reference_code() {
        // The authors' xoshiro256plusplus.c from the state {1, 2, 3, 4}, compiled with cc.
        let mut x = Xoshiro256PlusPlus::new([1, 2, 3, 4]);
        let expected = [
            41_943_041,
            58_720_359,
            3_588_806_011_781_223,
            3_591_011_842_654_386,
            9_228_616_714_210_784_205,
            9_973_669_472_204_895_162,
        ];
        for e in expected {
            assert_eq!(x.next_output(), e);
        }
    }

    #[test]
    fn xoshiro_words_are_low_then_high_halves_whichever_way_they_are_taken() {
        let mut one = Xoshiro256PlusPlus::new([1, 2, 3, 4]);
        assert_eq!(one.next_word(), 41_943_041);
        assert_eq!(one.next_word(), 0);
        let mut x = Stream::Xoshiro(Xoshiro256PlusPlus::new([5, 6, 7, 8]));
        let mut y = x.clone();
        let mut z = x.clone();
        let words: Vec<u32> = (0..19).map(|_| x.next_u32()).collect();
        let mut bytes = [0u8; 76];
        y.fill_bytes(&mut bytes);
        let filled: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(words, filled);
        let Stream::Xoshiro(zx) = &mut z else {
            unreachable!()
        };
        assert_eq!(zx.next_word(), words[0]);
        assert!(zx.mid_output());
        assert_eq!(zx.next_word(), words[1]);
        assert_eq!(zx.next_eight_words(), words[2..10]);
        assert_eq!(zx.next_word(), words[10]);
        assert!(zx.mid_output());
        assert_eq!(zx.next_eight_words(), words[11..19]);
        assert!(zx.mid_output());
        // After a whole odd count, the next output starts afresh in both.
        assert_eq!(x.next_u32(), y.next_u32());
    }

    #[test]
    fn each_analysis_has_its_generator_and_streams_differ_between_them() {
        assert_eq!(Generator::of_analysis(1), Some(Generator::ChaCha8));
        assert_eq!(
            Generator::of_analysis(2),
            Some(Generator::Xoshiro256PlusPlus)
        );
        assert_eq!(
            Generator::of_analysis(3),
            Some(Generator::Xoshiro256PlusPlus),
            "analysis 3 keeps disturbed runs' timings and draws as analysis 2 does"
        );
        assert_eq!(Generator::of_analysis(0), None);
        assert_eq!(Generator::of_analysis(4), None);
        let mut first = stream_of(Generator::ChaCha8, 42, "cell/a");
        assert_eq!(first.next_u64(), 5_920_075_144_286_679_865);
        // Pinned: the state is the four SplitMix64 outputs the ChaCha8 key is made of.
        let mut second = stream_of(Generator::Xoshiro256PlusPlus, 42, "cell/a");
        let mut state = 42 ^ fnv1a64(b"cell/a");
        let s: [u64; 4] = std::array::from_fn(|_| splitmix64(&mut state));
        let mut reference = Xoshiro256PlusPlus::new(s);
        let out = reference.next_output();
        assert_eq!(second.next_u32(), out as u32);
        assert_eq!(second.next_u32(), (out >> 32) as u32);
        // The same first output from an independent Python transcription of the three
        // reference algorithms (FNV-1a, SplitMix64, xoshiro256++).
        assert_eq!(out, 2_129_169_184_978_677_556);
    }
}
