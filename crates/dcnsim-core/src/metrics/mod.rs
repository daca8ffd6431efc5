//! Result tables handed to the bindings as typed columns: one row per flow
//! (flows.parquet) and one row per port queue (ports.parquet). Columns are
//! plain vectors so the bindings can pass them on without conversion. What each column
//! and summary key means is declared by its writer as `Outputs`.


/// One typed column.
#[derive(Clone, Debug)]
pub enum ColumnData {
    U64(Vec<u64>),
    U32(Vec<u32>),
    U16(Vec<u16>),
    U8(Vec<u8>),
    F64(Vec<f64>),
}

impl ColumnData {
    pub fn len(&self) -> usize {
        match self {
            ColumnData::U64(v) => v.len(),
            ColumnData::U32(v) => v.len(),
            ColumnData::U16(v) => v.len(),
            ColumnData::U8(v) => v.len(),
            ColumnData::F64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Append `other`'s values (a column of the same type).
    pub fn append(&mut self, other: ColumnData) {
        match (self, other) {
            (ColumnData::U64(a), ColumnData::U64(b)) => a.extend(b),
            (ColumnData::U32(a), ColumnData::U32(b)) => a.extend(b),
            (ColumnData::U16(a), ColumnData::U16(b)) => a.extend(b),
            (ColumnData::U8(a), ColumnData::U8(b)) => a.extend(b),
            (ColumnData::F64(a), ColumnData::F64(b)) => a.extend(b),
            (a, b) => panic!("appending a {} column to a {} one", b.dtype(), a.dtype()),
        }
    }
    /// Take `other`'s values (a column of the same type and length) in each of the row
    /// ranges `rows`.
    pub fn take_rows_in(&mut self, other: &ColumnData, rows: &[std::ops::Range<usize>]) {
        fn each<T: Copy>(a: &mut [T], b: &[T], rows: &[std::ops::Range<usize>]) {
            assert_eq!(a.len(), b.len(), "taking rows of a column of another length");
            for r in rows {
                a[r.clone()].copy_from_slice(&b[r.clone()]);
            }
        }
        match (self, other) {
            (ColumnData::U64(a), ColumnData::U64(b)) => each(a, b, rows),
            (ColumnData::U32(a), ColumnData::U32(b)) => each(a, b, rows),
            (ColumnData::U16(a), ColumnData::U16(b)) => each(a, b, rows),
            (ColumnData::U8(a), ColumnData::U8(b)) => each(a, b, rows),
            (ColumnData::F64(a), ColumnData::F64(b)) => each(a, b, rows),
            (a, b) => panic!("taking rows of a {} column into a {} one", b.dtype(), a.dtype()),
        }
    }
    /// numpy dtype string of the column.
    pub fn dtype(&self) -> &'static str {
        match self {
            ColumnData::U64(_) => "<u8",
            ColumnData::U32(_) => "<u4",
            ColumnData::U16(_) => "<u2",
            ColumnData::U8(_) => "|u1",
            ColumnData::F64(_) => "<f8",
        }
    }
    /// Little-endian bytes of the column.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            ColumnData::U64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ColumnData::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ColumnData::U16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ColumnData::U8(v) => v.clone(),
            ColumnData::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }
}

/// A named set of equally long columns.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub columns: Vec<(String, ColumnData)>,
}

impl Table {
    pub fn push(&mut self, name: &str, c: ColumnData) {
        self.columns.push((name.to_string(), c));
    }
    /// Append `other`'s rows (a table of the same columns).
    pub fn append(&mut self, other: Table) {
        for ((name, a), (other_name, b)) in self.columns.iter_mut().zip(other.columns) {
            debug_assert_eq!(*name, other_name);
            a.append(b);
        }
    }
    pub fn get(&self, name: &str) -> Option<&ColumnData> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    /// Replace column `name`'s values (or add it).
    pub fn set(&mut self, name: &str, c: ColumnData) {
        match self.columns.iter_mut().find(|(n, _)| n == name) {
            Some((_, old)) => *old = c,
            None => self.push(name, c),
        }
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|(_, c)| c.len()).unwrap_or(0)
    }
    pub fn u64(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Some(ColumnData::U64(v)) => v,
            _ => panic!("no u64 column {name}"),
        }
    }
    pub fn u32(&self, name: &str) -> &[u32] {
        match self.get(name) {
            Some(ColumnData::U32(v)) => v,
            _ => panic!("no u32 column {name}"),
        }
    }
    pub fn f64(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Some(ColumnData::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
}

/// Columns or summary keys that share one meaning (`end_ps`, `fct_ps`), and that meaning:
/// one row of the outputs reference (docs/user-guide.md, "Outputs"). A meaning that holds
/// only in some runs says in which ("With PFC: ...").
pub type Described = (&'static [&'static str], &'static str);

/// What one writer of the results adds to them (the engine, or a switch mechanism when it is
/// configured): its columns of the flows and ports tables and its summary keys, each with
/// its meaning. Each writer declares its own beside the code that writes them, so that the
/// reference cannot drift from the code (`scenario::outputs` collects them and holds every
/// run's columns and keys to them).
#[derive(Copy, Clone, Debug)]
pub struct Outputs {
    pub flows: &'static [Described],
    pub ports: &'static [Described],
    pub summary: &'static [Described],
}

impl Outputs {
    /// A writer with no columns or keys of its own.
    pub const NONE: Outputs = Outputs { flows: &[], ports: &[], summary: &[] };
}

/// How a run split over threads combines a summary key over its partitions
/// (engine/parallel.rs): every key a mechanism writes says which, where it writes it
/// (`switch::pipeline::Report::count`, `same`), and the engine's own keys are listed there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Combine {
    /// A count over the fabric, each partition counting its own nodes' share: summed.
    Sum,
    /// The same in every partition (a parameter, a decision the partitions make alike), or
    /// worked out again from the merged tables: the first partition's.
    First,
    /// A list of what each partition saw (e.g. invariant violations): joined.
    Concat,
}

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct Results {
    pub flows: Table,
    pub ports: Table,
    /// Sampled queue-depth histograms (empty unless `metrics.queue_sample` is set).
    pub queues: Table,
    /// Per-flow goodput per time bin (empty unless `metrics.throughput_bin` is set).
    pub timeseries: Table,
    /// Switch queue depths over time, per sample and queue class: the deepest egress
    /// queue, all of them together and how many held anything (empty unless
    /// `metrics.queue_sample` is set).
    pub queue_series: Table,
    pub tags: Vec<String>,
    pub nodes: Vec<String>,
    pub summary: serde_json::Value,
    /// How a split run combines each summary key the mechanisms wrote.
    pub combine: Vec<(String, Combine)>,
    /// The pcapng file of `metrics.capture` (None: no capture).
    pub capture: Option<Vec<u8>>,
}
