//! The crossbar schedulers: one matching of inputs to outputs per cell time, from the
//! requests of the inputs' queues.
//!
//! * iSLIP (McKeown, "The iSLIP scheduling algorithm for input-queued switches", IEEE/ACM
//!   Trans. Networking 7(2), 1999, sec. III): request, grant, accept, each output and
//!   input choosing round-robin from its own pointer; the pointers move one past the
//!   accepted partner, and only for grants accepted in the first iteration, which is what
//!   desynchronises the outputs and gives 100% throughput under uniform traffic with one
//!   iteration.
//! * PIM (Anderson, Owicki, Saxe, Thacker, "High-speed switch scheduling for local-area
//!   networks", ACM TOCS 11(4), 1993, sec. 3): the same three steps with uniformly random
//!   grants and accepts; one iteration matches 1 - (1 - 1/N)^N of N saturated inputs (63%
//!   as N grows).
//!
//! A FIFO input queue requests only its head's output, so its accept step has one grant to
//! take: PIM then is Karol, Hluchyj and Morgan's random selection among head-of-line
//! contenders ("Input versus output queueing on a space-division packet switch", IEEE
//! Trans. Communications 35(12), 1987), iSLIP a round-robin one.

use crate::sim::Rng;
use rand::Rng as _;

/// The requests of one cell time: `n` inputs by `n` outputs (`at(i, o)`: input `i` has a
/// packet for output `o`, and both may take part this cell time), kept as a bit mask of
/// the requesting inputs per output where the switch has at most `MASK_BITS` ports, so that
/// a round-robin or random choice is a few bit operations instead of a scan.
pub struct Requests {
    n: usize,
    /// Per output, bit `i` set when input `i` requests it (`n <= MASK_BITS`).
    col: Vec<u128>,
    /// Row-major, `at(i, o)` (a switch of more than `MASK_BITS` ports).
    r: Vec<bool>,
    any: bool,
}

/// The most ports the bit-mask matching handles; a larger switch scans (`iterate`).
pub(super) const MASK_BITS: usize = 128;

impl Requests {
    pub fn new(n: usize) -> Requests {
        let masks = n <= MASK_BITS;
        Requests { n, col: vec![0; if masks { n } else { 0 }], r: vec![false; if masks { 0 } else { n * n }], any: false }
    }
    /// Forget every request (the next cell time's start).
    pub fn clear(&mut self) {
        if self.any {
            self.col.iter_mut().for_each(|x| *x = 0);
            self.r.iter_mut().for_each(|x| *x = false);
            self.any = false;
        }
    }
    pub fn set(&mut self, i: usize, o: usize) {
        match self.col.get_mut(o) {
            Some(c) => *c |= 1 << i,
            None => self.r[i * self.n + o] = true,
        }
        self.any = true;
    }
    #[inline]
    fn at(&self, i: usize, o: usize) -> bool {
        match self.col.get(o) {
            Some(c) => c >> i & 1 == 1,
            None => self.r[i * self.n + o],
        }
    }
}

/// iSLIP's round-robin pointers: per output, the input its grant search starts at; per
/// input, the output its accept search starts at.
#[derive(Clone, Debug)]
pub struct Pointers {
    grant: Vec<usize>,
    accept: Vec<usize>,
}

impl Pointers {
    pub fn new(n: usize) -> Pointers {
        Pointers { grant: vec![0; n], accept: vec![0; n] }
    }
    /// Output `o`'s grant pointer, to keep one per class (McKeown 1999, sec. VI,
    /// "Prioritized iSLIP" keeps separate pointers for each priority level; with one for
    /// all, an output alternating between classes can leave its pointer where one input
    /// of a class is never reached).
    pub fn swap_grant(&mut self, o: usize, with: &mut usize) {
        std::mem::swap(&mut self.grant[o], with);
    }
}

/// The first `k` in `0..n` from `from` on, round-robin, for which `ok(k)`.
#[inline]
fn round_robin(n: usize, from: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
    (0..n).map(|d| (from + d) % n).find(|&k| ok(k))
}

/// A uniformly random `k` in `0..n` for which `ok(k)` (one draw among the candidates;
/// none drawn when there are none).
#[inline]
fn random(n: usize, rng: &mut Rng, ok: impl Fn(usize) -> bool) -> Option<usize> {
    let count = (0..n).filter(|&k| ok(k)).count();
    if count == 0 {
        return None;
    }
    let pick = if count == 1 { 0 } else { rng.gen_range(0..count) };
    (0..n).filter(|&k| ok(k)).nth(pick)
}

/// How a scheduler's outputs choose among their requests and its inputs among their grants.
trait Choose {
    /// Output `o`'s grant among the inputs `ok` admits.
    fn grant(&mut self, n: usize, o: usize, ok: impl Fn(usize) -> bool) -> Option<usize>;
    /// Input `i`'s accept among the outputs `ok` admits.
    fn accept(&mut self, n: usize, i: usize, ok: impl Fn(usize) -> bool) -> Option<usize>;
    /// Input `i` accepted output `o` in the first iteration.
    fn accepted_first(&mut self, n: usize, i: usize, o: usize);
}

/// iSLIP: round-robin from the pointers, which move one past a first-iteration accept.
impl Choose for &mut Pointers {
    fn grant(&mut self, n: usize, o: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
        round_robin(n, self.grant[o], ok)
    }
    fn accept(&mut self, n: usize, i: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
        round_robin(n, self.accept[i], ok)
    }
    fn accepted_first(&mut self, n: usize, i: usize, o: usize) {
        self.accept[i] = (o + 1) % n;
        self.grant[o] = (i + 1) % n;
    }
}

/// PIM: uniformly random grants and accepts.
impl Choose for &mut Rng {
    fn grant(&mut self, n: usize, _o: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
        random(n, self, ok)
    }
    fn accept(&mut self, n: usize, _i: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
        random(n, self, ok)
    }
    fn accepted_first(&mut self, _n: usize, _i: usize, _o: usize) {}
}

/// The choices of `Choose` on bit masks of the candidates (bit `k`: candidate `k` of `n`),
/// the same as its choices by scanning: the first candidate from the pointer on,
/// round-robin; or the `gen_range(0..count)`-th candidate, drawn only among two or more.
trait ChooseMask: Choose {
    fn grant_mask(&mut self, n: usize, o: usize, m: u128) -> Option<usize>;
    fn accept_mask(&mut self, n: usize, i: usize, m: u128) -> Option<usize>;
}

/// The first set bit of `m` (of `n` bits) from bit `from` on, round-robin.
#[inline]
fn round_robin_mask(n: usize, from: usize, m: u128) -> Option<usize> {
    if m == 0 {
        return None;
    }
    let high = m >> from;
    Some(if high != 0 { from + high.trailing_zeros() as usize } else { m.trailing_zeros() as usize }).filter(|&k| k < n)
}

/// The `k`-th set bit of `m`.
#[inline]
fn nth_bit(mut m: u128, k: usize) -> usize {
    for _ in 0..k {
        m &= m - 1;
    }
    m.trailing_zeros() as usize
}

#[inline]
fn random_mask(rng: &mut Rng, m: u128) -> Option<usize> {
    let count = m.count_ones() as usize;
    if count == 0 {
        return None;
    }
    let pick = if count == 1 { 0 } else { rng.gen_range(0..count) };
    Some(nth_bit(m, pick))
}

impl ChooseMask for &mut Pointers {
    fn grant_mask(&mut self, n: usize, o: usize, m: u128) -> Option<usize> {
        round_robin_mask(n, self.grant[o], m)
    }
    fn accept_mask(&mut self, n: usize, i: usize, m: u128) -> Option<usize> {
        round_robin_mask(n, self.accept[i], m)
    }
}

impl ChooseMask for &mut Rng {
    fn grant_mask(&mut self, _n: usize, _o: usize, m: u128) -> Option<usize> {
        random_mask(self, m)
    }
    fn accept_mask(&mut self, _n: usize, _i: usize, m: u128) -> Option<usize> {
        random_mask(self, m)
    }
}

/// `iterate` on bit masks (a switch of at most `MASK_BITS` ports): the same matching and
/// the same pointer moves and random draws, in O(N) bit operations per round.
fn iterate_masks(req: &Requests, iterations: u32, c: &mut impl ChooseMask, matched: &mut [Option<usize>]) {
    let n = req.n;
    let mut unmatched_in: u128 = if n == MASK_BITS { u128::MAX } else { (1u128 << n) - 1 };
    let mut taken_out: u128 = 0;
    let mut granted = [0u128; MASK_BITS];
    for it in 0..iterations {
        granted[..n].iter_mut().for_each(|g| *g = 0);
        for o in 0..n {
            if taken_out >> o & 1 == 0 {
                if let Some(i) = c.grant_mask(n, o, req.col[o] & unmatched_in) {
                    granted[i] |= 1 << o;
                }
            }
        }
        let mut any = false;
        for i in 0..n {
            if unmatched_in >> i & 1 == 0 {
                continue;
            }
            let Some(o) = c.accept_mask(n, i, granted[i]) else { continue };
            matched[i] = Some(o);
            unmatched_in &= !(1 << i);
            taken_out |= 1 << o;
            any = true;
            if it == 0 {
                c.accepted_first(n, i, o);
            }
        }
        if !any {
            break;
        }
    }
}

/// Request, grant and accept for up to `iterations` rounds, stopping at a round that
/// matches nothing more: per input, the output it is matched to.
fn iterate(req: &Requests, iterations: u32, mut c: impl ChooseMask) -> Vec<Option<usize>> {
    if req.n <= MASK_BITS {
        let mut matched = vec![None; req.n];
        if req.any {
            iterate_masks(req, iterations, &mut c, &mut matched);
        }
        return matched;
    }
    iterate_scan(req, iterations, c)
}

/// `iterate` by scanning the request matrix (a switch of more than `MASK_BITS` ports, and
/// the tests' reference for the masks).
fn iterate_scan(req: &Requests, iterations: u32, mut c: impl Choose) -> Vec<Option<usize>> {
    let n = req.n;
    let mut matched: Vec<Option<usize>> = vec![None; n];
    let mut out_taken = vec![false; n];
    let mut grant: Vec<Option<usize>> = vec![None; n];
    for it in 0..iterations {
        // grant: each unmatched output, among the unmatched inputs that request it
        for o in 0..n {
            grant[o] = if out_taken[o] { None } else { c.grant(n, o, |i| matched[i].is_none() && req.at(i, o)) };
        }
        // accept: each unmatched input, among the outputs that granted it
        let mut any = false;
        for i in 0..n {
            if matched[i].is_some() {
                continue;
            }
            let Some(o) = c.accept(n, i, |o| grant[o] == Some(i)) else { continue };
            matched[i] = Some(o);
            out_taken[o] = true;
            any = true;
            if it == 0 {
                c.accepted_first(n, i, o);
            }
        }
        if !any {
            break;
        }
    }
    matched
}

/// iSLIP with `iterations` (>= 1) rounds: per input, the output it is matched to.
pub fn islip(req: &Requests, iterations: u32, ptr: &mut Pointers) -> Vec<Option<usize>> {
    iterate(req, iterations, ptr)
}

/// PIM with `iterations` (>= 1) rounds, drawing from `rng`: per input, its output.
pub fn pim(req: &Requests, iterations: u32, rng: &mut Rng) -> Vec<Option<usize>> {
    iterate(req, iterations, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{stream, Stream};

    fn full(n: usize) -> Requests {
        let mut r = Requests::new(n);
        (0..n).for_each(|i| (0..n).for_each(|o| r.set(i, o)));
        r
    }

    fn size(m: &[Option<usize>]) -> usize {
        m.iter().flatten().count()
    }

    /// Every matching is one: no output twice, and only requested pairs.
    fn is_matching(req: &Requests, m: &[Option<usize>]) -> bool {
        let mut seen = vec![false; req.n];
        m.iter().enumerate().all(|(i, o)| o.map_or(true, |o| req.at(i, o) && !std::mem::replace(&mut seen[o], true)))
    }

    /// With every queue full, 1-SLIP's pointers fall out of step within N cell times
    /// (McKeown 1999, sec. III-B): from then on each cell time matches every input.
    #[test]
    fn islip_desynchronises_to_a_full_matching_under_saturation() {
        let n = 8;
        let req = full(n);
        let mut ptr = Pointers::new(n);
        let sizes: Vec<usize> = (0..3 * n).map(|_| size(&islip(&req, 1, &mut ptr))).collect();
        assert_eq!(sizes[0], 1, "all outputs grant input 0 at first: {sizes:?}");
        assert!(sizes[n..].iter().all(|&s| s == n), "{sizes:?}");
    }

    /// One PIM iteration over N saturated inputs matches 1 - (1 - 1/N)^N of them on average
    /// (each input is granted by some output with that probability, and accepts one):
    /// N = 8, 0.656; more iterations add the rest (4 iterations: above 0.98).
    #[test]
    fn pim_matches_one_minus_one_over_e_of_saturated_inputs_in_one_iteration() {
        let n = 8;
        let req = full(n);
        let mut rng = stream(7, Stream::SwitchAqm, 0);
        let trials = 20_000;
        let mean = |it: u32, rng: &mut Rng| (0..trials).map(|_| size(&pim(&req, it, rng))).sum::<usize>() as f64 / (trials * n) as f64;
        let one = mean(1, &mut rng);
        let expected = 1.0 - (1.0 - 1.0 / n as f64).powi(n as i32);
        assert!((one - expected).abs() < 0.005, "{one} against {expected}");
        assert!(mean(4, &mut rng) > 0.98);
    }

    /// The bit masks choose as the scan does: the same matchings, the same pointer moves,
    /// the same random draws, on random request patterns over many cell times.
    #[test]
    fn masks_match_the_scan_exactly() {
        for n in [1, 2, 5, 8, 64, 100, 128] {
            let mut rng = stream(11, Stream::SwitchAqm, n as u64);
            let (mut pm, mut ps) = (Pointers::new(n), Pointers::new(n));
            let (mut rm, mut rs) = (stream(5, Stream::SwitchAqm, 2), stream(5, Stream::SwitchAqm, 2));
            for t in 0..300 {
                let mut req = Requests::new(n);
                let p = [0.0, 0.05, 0.3, 1.0][t % 4];
                (0..n).for_each(|i| (0..n).for_each(|o| if rng.gen_bool(p) { req.set(i, o) }));
                let it = 1 + (t as u32 % 3);
                assert_eq!(islip(&req, it, &mut pm), iterate_scan(&req, it, &mut ps), "n = {n}, t = {t}");
                assert_eq!((&pm.grant, &pm.accept), (&ps.grant, &ps.accept));
                assert_eq!(pim(&req, it, &mut rm), iterate_scan(&req, it, &mut rs), "n = {n}, t = {t}");
            }
            assert_eq!(rm.gen::<u64>(), rs.gen::<u64>(), "the same draws");
        }
    }

    /// Both give matchings on random request patterns, and more iterations never match fewer.
    #[test]
    fn schedulers_give_matchings_that_iterations_only_grow() {
        let n = 6;
        let mut rng = stream(3, Stream::SwitchAqm, 1);
        for _ in 0..2_000 {
            let mut req = Requests::new(n);
            (0..n).for_each(|i| (0..n).for_each(|o| if rng.gen_bool(0.3) { req.set(i, o) }));
            let (mut p1, mut p4) = (Pointers::new(n), Pointers::new(n));
            let (one, four) = (islip(&req, 1, &mut p1), islip(&req, 4, &mut p4));
            assert!(is_matching(&req, &one) && is_matching(&req, &four));
            assert!(size(&four) >= size(&one));
            assert!(is_matching(&req, &pim(&req, 3, &mut rng)));
        }
    }
}
