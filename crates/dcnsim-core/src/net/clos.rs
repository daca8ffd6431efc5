//! Two-tier leaf-spine Clos: every ToR connects to every spine with one link;
//! `servers_per_tor` hosts hang off each ToR. Seed 000 is 48 ToR x 24 servers
//! and 24 spines (1152 servers, 72 switches) at 100 Gbps with 200 ns links.

use super::topology::Topology;
use crate::sim::SimTime;

/// `interleaved` puts server i on ToR i mod tors instead of ToR i / servers_per_tor.
pub fn build(servers_per_tor: u32, tors: u32, spines: u32, interleaved: bool, host: (u64, SimTime), fabric: (u64, SimTime)) -> Topology {
    let mut t = Topology::default();
    let tor_ids: Vec<_> = (0..tors).map(|i| t.add_switch(format!("tor{i}"))).collect();
    let spine_ids: Vec<_> = (0..spines).map(|i| t.add_switch(format!("spine{i}"))).collect();
    for &tor in &tor_ids {
        for &sp in &spine_ids {
            t.connect(tor, sp, fabric.0, fabric.1);
        }
    }
    for i in 0..servers_per_tor * tors {
        let tor = if interleaved { tor_ids[(i % tors) as usize] } else { tor_ids[(i / servers_per_tor) as usize] };
        let h = t.add_host(format!("h{i}"));
        t.connect(h, tor, host.0, host.1);
    }
    t
}
