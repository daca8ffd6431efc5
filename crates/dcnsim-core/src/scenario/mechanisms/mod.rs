//! One module per switch mechanism's scenario table: the table (a serde struct whose doc
//! comments are the reference), its checks (`validate`, called in pipeline order by
//! `scenario::validate`) and its conversion to the mechanism's `Params`.
//! FQ-CoDel keeps both in its own file (switch/fq_codel.rs).

pub(super) mod aqm;
pub(super) mod ci;
pub(super) mod drc;
pub(super) mod pfc;
pub(super) mod qcn;
pub(super) mod sfc;
