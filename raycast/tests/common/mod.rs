//! Support shared by the integration tests.

// Each test crate uses only some of these.
#![allow(dead_code)]

use raycast::{vec3, Vec3};

/// SplitMix64 (Steele, Lea & Flood 2014): seeded test inputs, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn in_box(&mut self, lo: Vec3, hi: Vec3) -> Vec3 {
        lo + (hi - lo) * vec3(self.unit(), self.unit(), self.unit())
    }
    pub fn on_sphere(&mut self) -> Vec3 {
        loop {
            let p = vec3(self.unit(), self.unit(), self.unit()) * 2.0 - Vec3::ONE;
            let l = p.length();
            if l > 0.1 && l <= 1.0 {
                return p / l;
            }
        }
    }
}
