//! Dumbbell: `senders` hosts on switch "left", `receivers` hosts on switch
//! "right", one bottleneck link between the switches. Hosts 0..senders are the
//! senders; the receivers follow.

use super::topology::Topology;
use crate::sim::SimTime;

pub fn build(senders: u32, receivers: u32, host: (u64, SimTime), bottleneck: (u64, SimTime)) -> Topology {
    let mut t = Topology::default();
    let left = t.add_switch("left");
    let right = t.add_switch("right");
    t.connect(left, right, bottleneck.0, bottleneck.1);
    for i in 0..senders + receivers {
        let h = t.add_host(format!("h{i}"));
        t.connect(h, if i < senders { left } else { right }, host.0, host.1);
    }
    t
}
