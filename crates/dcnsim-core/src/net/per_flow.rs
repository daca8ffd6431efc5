//! Values kept per flow beside the hosts' flow table, by flow id: a container the switch
//! mechanisms that hold per-flow state use (SFC, QCN, PFC) without knowing the hosts.

use super::FlowId;

/// A value per flow that a mechanism keeps beside the flow table (SFC's paused time, a QCN
/// reaction point, PFC's victim flag), by flow id; a streamed run forgets the values of the
/// flows whose rows it has handed out (`FlowTable::take_final`), as the table forgets their
/// rows.
#[derive(Clone, Debug, Default)]
pub struct PerFlow<T> {
    /// Values below this id are forgotten.
    base: usize,
    v: Vec<T>,
}

impl<T: Clone + Default> PerFlow<T> {
    /// Flow `f`'s value, if it has one.
    #[inline]
    pub fn get(&self, f: FlowId) -> Option<&T> {
        self.v.get((f as usize).wrapping_sub(self.base))
    }
    #[inline]
    pub fn get_mut(&mut self, f: FlowId) -> Option<&mut T> {
        self.v.get_mut((f as usize).wrapping_sub(self.base))
    }
    /// Flow `f`'s value, made (default) if it has none. A forgotten flow has no packet left
    /// to give it one, so asking for one is a bug.
    pub fn entry(&mut self, f: FlowId) -> &mut T {
        let i = (f as usize).checked_sub(self.base).unwrap_or_else(|| panic!("flow {f}'s row was handed out already"));
        if self.v.len() <= i {
            self.v.resize(i + 1, T::default());
        }
        &mut self.v[i]
    }
    /// The values of flows `ids` (default where none), mapped by `f`: a flows-table column.
    pub fn column<U>(&self, ids: &[usize], f: impl Fn(&T) -> U) -> Vec<U> {
        let none = T::default();
        ids.iter().map(|&i| f(self.v.get(i.wrapping_sub(self.base)).unwrap_or(&none))).collect()
    }
    /// Every value held, in id order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.v.iter()
    }
    /// Forget the values of flows `ids` (returned, for totals), and the room of every flow
    /// below `below` (all forgotten).
    pub fn forget(&mut self, ids: &[usize], below: usize) -> Vec<T> {
        let taken = ids.iter().filter_map(|&i| self.v.get_mut(i.wrapping_sub(self.base)).map(std::mem::take)).collect();
        let n = below.saturating_sub(self.base).min(self.v.len());
        self.v.drain(..n);
        self.base = self.base.max(below);
        taken
    }
}
