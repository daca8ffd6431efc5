//! Trace-driven workloads (`[[workload]] kind = "trace"`): the flows of a CSV or Parquet
//! file, one row each, made as the run reaches them. A production trace of millions of
//! flows is never held whole: the file is read row by row (CSV record by record, Parquet
//! through its row-group reader), once to check it ([`info`], whose summary is kept per
//! file version so that validate, the memory estimate and the run read it once) and once
//! more as the run goes ([`TraceFlows`]). The same rows written as a `kind = "flows"` list
//! give the same run (a test holds the two equal).
//!
//! The format is that of the `src`, `dst`, `size_bytes`, `start_ps`, `priority` and `tag`
//! columns of a run's flows.parquet, so a run's flows sorted by start are a trace
//! (docs/workloads.md, "Trace files"). Rows must be in start order: a stream can only hand
//! the engine its flows in the order they start.

use crate::host::{CcName, Transport, TransportKind};
use crate::net::HostId;
use crate::sim::units::{self, QuantityError};
use crate::sim::SimTime;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// Every column a trace may have, with what it holds (the error for an unknown column and
/// the docs list them from here).
pub const COLUMNS: [(&str, &str); 10] = [
    ("src", "source host: an index 0..hosts-1, or a host's name (\"h3\", or a custom topology's name)"),
    ("dst", "destination host, as src (both indices or both names), not src"),
    ("size_bytes", "bytes of payload (wire bytes for UDP), an integer > 0"),
    ("size", "instead of size_bytes: a size with its unit, e.g. \"64KB\""),
    ("start_ps", "start time in picoseconds, an integer >= 0"),
    ("start", "instead of start_ps: a time with its unit, e.g. \"10us\""),
    ("priority", "traffic class 0..7 (optional; empty: the workload's priority)"),
    ("tag", "label in the tag column (optional; empty: the workload's tag)"),
    ("transport", "as [transport] kind names one (optional; empty: the workload's)"),
    ("cc", "congestion control, as [transport] cc (optional; empty: the workload's, as for a flow's transport)"),
];

/// A host as a row names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HostRef {
    Index(u32),
    Name(String),
}

/// One row of a trace, checked on its own (its hosts not yet looked up on the fabric).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRow {
    pub src: HostRef,
    pub dst: HostRef,
    pub size: u64,
    pub start: SimTime,
    pub priority: Option<u8>,
    pub tag: Option<String>,
    pub transport: Option<TransportKind>,
    pub cc: Option<CcName>,
}

/// Where each column is in the file's rows.
#[derive(Clone, Debug)]
struct Columns {
    /// Each of the file's columns by its name (one of [`COLUMNS`]), for the errors.
    header: Vec<&'static str>,
    src: usize,
    dst: usize,
    /// The size's column, and whether it carries units (`size`) or is bytes (`size_bytes`).
    size: (usize, bool),
    /// The start's column, and whether it carries units (`start`) or is picoseconds.
    start: (usize, bool),
    priority: Option<usize>,
    tag: Option<usize>,
    transport: Option<usize>,
    cc: Option<usize>,
}

impl Columns {
    /// The columns of a file's header, every one known, the required ones present once.
    fn of(names: &[String], file: &str) -> Result<Columns, String> {
        let known: Vec<&'static str> = COLUMNS.iter().map(|c| c.0).collect();
        let mut at: HashMap<&str, usize> = HashMap::new();
        let mut header = Vec::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            let n = n.trim();
            let Some(&name) = known.iter().find(|k| **k == n) else {
                return Err(format!(
                    "{file}: unknown column \"{n}\", expected columns among {} (a run's flows.parquet: keep src, dst, size_bytes, start_ps, priority and tag; docs/workloads.md)",
                    known.join(", ")
                ));
            };
            header.push(name);
            if at.insert(name, i).is_some() {
                return Err(format!("{file}: column \"{n}\" appears twice, expected each column once"));
            }
        }
        let one_of = |a: &str, b: &str| -> Result<(usize, bool), String> {
            match (at.get(a), at.get(b)) {
                (Some(&i), None) => Ok((i, false)),
                (None, Some(&i)) => Ok((i, true)),
                (Some(_), Some(_)) => Err(format!("{file}: both columns \"{a}\" and \"{b}\", expected one of them")),
                (None, None) => Err(format!("{file}: no column \"{a}\" (or \"{b}\"), expected one; the columns are {}", names.join(", "))),
            }
        };
        let need = |a: &str| at.get(a).copied().ok_or_else(|| format!("{file}: no column \"{a}\", expected one; the columns are {}", names.join(", ")));
        Ok(Columns {
            header,
            src: need("src")?,
            dst: need("dst")?,
            size: one_of("size_bytes", "size")?,
            start: one_of("start_ps", "start")?,
            priority: at.get("priority").copied(),
            tag: at.get("tag").copied(),
            transport: at.get("transport").copied(),
            cc: at.get("cc").copied(),
        })
    }
}

/// One value of a row, as CSV text or a Parquet field.
#[derive(Clone, Copy, Debug)]
enum Cell<'a> {
    Null,
    Int(i128),
    Float(f64),
    Text(&'a str),
    /// A Parquet type no column takes (its name).
    Other(&'static str),
}

impl std::fmt::Display for Cell<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Null => write!(f, "(empty)"),
            Cell::Int(i) => write!(f, "{i}"),
            Cell::Float(x) => write!(f, "{x}"),
            Cell::Text(s) => write!(f, "\"{s}\""),
            Cell::Other(t) => write!(f, "a value of type {t}"),
        }
    }
}

fn parquet_cell(f: &parquet::record::Field) -> Cell<'_> {
    use parquet::record::Field as F;
    match f {
        F::Null => Cell::Null,
        F::Byte(v) => Cell::Int(*v as i128),
        F::Short(v) => Cell::Int(*v as i128),
        F::Int(v) => Cell::Int(*v as i128),
        F::Long(v) => Cell::Int(*v as i128),
        F::UByte(v) => Cell::Int(*v as i128),
        F::UShort(v) => Cell::Int(*v as i128),
        F::UInt(v) => Cell::Int(*v as i128),
        F::ULong(v) => Cell::Int(*v as i128),
        F::Float(v) => Cell::Float(*v as f64),
        F::Double(v) => Cell::Float(*v),
        F::Str(s) => Cell::Text(s),
        F::Bytes(b) => std::str::from_utf8(b.data()).map_or(Cell::Other("binary"), Cell::Text),
        F::Bool(_) => Cell::Other("boolean"),
        _ => Cell::Other("date, time, decimal or nested"),
    }
}

/// A whole number >= 0: an integer, an integral float (pandas writes integer columns with
/// gaps as floats) or, in CSV, digits.
fn whole(c: Cell) -> Option<u64> {
    match c {
        Cell::Int(i) => u64::try_from(i).ok(),
        Cell::Float(x) if x >= 0.0 && x.fract() == 0.0 && x < 1.8e19 => Some(x as u64),
        Cell::Text(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        _ => None,
    }
}

fn host(c: Cell) -> Result<HostRef, String> {
    if let Some(i) = whole(c) {
        return u32::try_from(i).map(HostRef::Index).map_err(|_| format!("invalid value {c}, expected a host index below {}", u32::MAX));
    }
    match c {
        Cell::Text(s) if !s.is_empty() => Ok(HostRef::Name(s.to_string())),
        _ => Err(format!("invalid value {c}, expected a host index or a host name")),
    }
}

fn quantity(c: Cell, parse: fn(&str) -> Result<u64, QuantityError>, example: &str) -> Result<u64, String> {
    match c {
        Cell::Text(s) => parse(s).map_err(|e| match e {
            QuantityError::Malformed(why) => format!("invalid value {c}: {why}expected a number with its unit, e.g. \"{example}\""),
            QuantityError::OutOfRange(max) => format!("invalid value {c}, expected at most {max}"),
        }),
        _ => Err(format!("invalid value {c}, expected a number with its unit as text, e.g. \"{example}\"")),
    }
}

fn size(c: Cell, units: bool) -> Result<u64, String> {
    let v = if units {
        quantity(c, units::parse_size_checked, "64KB")?
    } else {
        whole(c).ok_or_else(|| format!("invalid value {c}, expected a whole number of bytes > 0"))?
    };
    if v == 0 {
        return Err(format!("invalid value {c}, expected a size > 0"));
    }
    if v > units::MAX_SIZE {
        return Err(format!("invalid value {c}, expected at most {} B", units::MAX_SIZE));
    }
    Ok(v)
}

fn start(c: Cell, units: bool) -> Result<SimTime, String> {
    let v = if units {
        quantity(c, |s| units::parse_duration_checked(s).map(|t| t.0), "10us")?
    } else {
        whole(c).ok_or_else(|| format!("invalid value {c}, expected a whole number of picoseconds >= 0"))?
    };
    if v > units::MAX_DURATION.0 {
        return Err(format!("invalid value {c}, expected at most {} ps (1000000s)", units::MAX_DURATION.0));
    }
    Ok(SimTime(v))
}

fn text<'a>(c: Cell<'a>) -> Result<Option<&'a str>, String> {
    match c {
        Cell::Null => Ok(None),
        Cell::Text(s) if s.is_empty() => Ok(None),
        Cell::Text(s) => Ok(Some(s)),
        _ => Err(format!("invalid value {c}, expected text")),
    }
}

/// Where the file's rows come from.
enum Source {
    Csv(csv::Reader<std::fs::File>, csv::StringRecord),
    Parquet(parquet::record::reader::RowIter<'static>),
}

/// A trace file read row by row, each row checked on its own and against the one before
/// (start order, hosts written alike).
pub struct TraceReader {
    file: String,
    source: Source,
    cols: Columns,
    /// Rows read so far (the last one's number, from 1).
    row: u64,
    last_start: SimTime,
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TraceReader {{ file: {}, row: {} }}", self.file, self.row)
    }
}

/// The format a file name says.
fn is_parquet(path: &str) -> Result<bool, String> {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".csv") {
        Ok(false)
    } else if lower.ends_with(".parquet") || lower.ends_with(".pq") {
        Ok(true)
    } else {
        Err(format!("invalid value \"{path}\", expected a file named *.csv or *.parquet (the name says its format)"))
    }
}

impl TraceReader {
    /// Open `path` (relative to the working directory) and read its header.
    pub fn open(path: &str) -> Result<TraceReader, String> {
        let parquet = is_parquet(path)?;
        let file = std::fs::File::open(path).map_err(|e| {
            let looked = std::path::absolute(path).map(|p| p.display().to_string()).unwrap_or_else(|_| path.to_string());
            format!("invalid value \"{path}\", expected a readable trace file (looked for {looked}: {e})")
        })?;
        let (source, names) = if parquet {
            use parquet::file::reader::{FileReader, SerializedFileReader};
            let r = SerializedFileReader::new(file).map_err(|e| format!("{path}: not a readable Parquet file ({e})"))?;
            let schema = r.metadata().file_metadata().schema_descr_ptr();
            let mut names = Vec::new();
            for c in schema.columns() {
                if c.path().parts().len() != 1 {
                    return Err(format!("{path}: nested column \"{}\", expected flat columns", c.path()));
                }
                names.push(c.name().to_string());
            }
            (Source::Parquet(parquet::record::reader::RowIter::from_file_into(Box::new(r))), names)
        } else {
            let mut r = csv::ReaderBuilder::new().has_headers(true).trim(csv::Trim::All).comment(Some(b'#')).from_reader(file);
            let names = r.headers().map_err(|e| format!("{path}: the header row does not read ({e})"))?.iter().map(str::to_string).collect();
            (Source::Csv(r, csv::StringRecord::new()), names)
        };
        let cols = Columns::of(&names, path)?;
        Ok(TraceReader { file: path.to_string(), source, cols, row: 0, last_start: SimTime::ZERO })
    }

    /// The next row, or why it is refused (naming the file, the row and the column).
    pub fn next_row(&mut self) -> Option<Result<TraceRow, String>> {
        let c = &self.cols;
        let (file, row) = (&self.file, self.row + 1);
        let (cells, line): (Vec<Cell>, Option<u64>);
        let parquet_row;
        match &mut self.source {
            Source::Csv(r, rec) => match r.read_record(rec) {
                Ok(false) => return None,
                Ok(true) => {
                    line = rec.position().map(|p| p.line());
                    cells = rec.iter().map(|s| if s.is_empty() { Cell::Null } else { Cell::Text(s) }).collect();
                }
                Err(e) => return Some(Err(format!("{file}, row {row}: does not read as CSV ({e})"))),
            },
            Source::Parquet(it) => match it.next()? {
                Ok(r) => {
                    parquet_row = r;
                    line = None;
                    cells = parquet_row.get_column_iter().map(|(_, f)| parquet_cell(f)).collect();
                }
                Err(e) => return Some(Err(format!("{file}, row {row}: does not read as Parquet ({e})"))),
            },
        }
        self.row = row;
        let cell = |i: usize| cells.get(i).copied().unwrap_or(Cell::Null);
        // where the row is, said only for a refusal (a run reads millions of good rows)
        let fail = |i: usize, m: String| match line {
            Some(l) => format!("{file}, row {row} (line {l}), column {}: {m}", c.header[i]),
            None => format!("{file}, row {row}, column {}: {m}", c.header[i]),
        };
        let r = (|| {
            let src = host(cell(c.src)).map_err(|m| fail(c.src, m))?;
            let dst = host(cell(c.dst)).map_err(|m| fail(c.dst, m))?;
            match (&src, &dst) {
                (HostRef::Index(_), HostRef::Name(_)) | (HostRef::Name(_), HostRef::Index(_)) => {
                    return Err(fail(c.dst, format!("invalid value {}, expected a host written as src is (src {}: both indices or both names)", cell(c.dst), cell(c.src))))
                }
                (a, b) if a == b => return Err(fail(c.dst, format!("invalid value {}, expected a host other than src", cell(c.dst)))),
                _ => {}
            }
            let size = size(cell(c.size.0), c.size.1).map_err(|m| fail(c.size.0, m))?;
            let start = start(cell(c.start.0), c.start.1).map_err(|m| fail(c.start.0, m))?;
            if start < self.last_start {
                return Err(fail(
                    c.start.0,
                    format!(
                        "start {} ps is before row {}'s {} ps; expected rows in start order (sort the file by its start column)",
                        start.0,
                        row - 1,
                        self.last_start.0
                    ),
                ));
            }
            let priority = match c.priority.map(cell) {
                None | Some(Cell::Null) => None,
                Some(v) => match whole(v) {
                    Some(p) if p <= 7 => Some(p as u8),
                    _ => return Err(fail(c.priority.unwrap(), format!("invalid value {v}, expected a priority 0..7"))),
                },
            };
            let tag = match c.tag.map(cell) {
                None | Some(Cell::Null) => None,
                Some(Cell::Int(i)) => Some(i.to_string()),
                Some(v) => text(v).map_err(|m| fail(c.tag.unwrap(), m))?.map(str::to_string),
            };
            let named = |i: Option<usize>, names: &dyn Fn() -> String| -> Result<Option<String>, String> {
                let Some(i) = i else { return Ok(None) };
                match text(cell(i)) {
                    Ok(t) => Ok(t.map(str::to_string)),
                    Err(m) => Err(fail(i, format!("{m}: one of {}", names()))),
                }
            };
            let transport_names = || TransportKind::names().into_iter().map(|(n, _)| n).collect::<Vec<_>>().join(", ");
            let cc_names = || CcName::distinct().map(CcName::name).collect::<Vec<_>>().join(", ");
            let transport = match named(c.transport, &transport_names)? {
                None => None,
                Some(t) => Some(TransportKind::from_name(&t).ok_or_else(|| fail(c.transport.unwrap(), format!("invalid value \"{t}\", expected one of {}", transport_names())))?),
            };
            let cc = match named(c.cc, &cc_names)? {
                None => None,
                Some(t) => Some(CcName::from_name(&t).ok_or_else(|| fail(c.cc.unwrap(), format!("invalid value \"{t}\", expected one of {}", cc_names())))?),
            };
            if transport.is_some() || cc.is_some() {
                // whether the pair names one transport does not depend on the transport it
                // would inherit: checked here once for every workload the trace may serve
                let any = Transport::Tcp(crate::host::DEFAULT_WINDOW_CC);
                if let Err(m) = TransportKind::resolve(transport, cc, any) {
                    return Err(fail(c.cc.unwrap_or(c.src), m));
                }
            }
            Ok(TraceRow { src, dst, size, start, priority, tag, transport, cc })
        })();
        if let Ok(r) = &r {
            self.last_start = r.start;
        }
        Some(r)
    }
}

/// Rows of one (transport, cc, priority) as the file writes them, and the largest.
#[derive(Clone, Debug, PartialEq)]
pub struct RowKind {
    pub transport: Option<TransportKind>,
    pub cc: Option<CcName>,
    pub priority: Option<u8>,
    /// The first row of this kind.
    pub row: u64,
    /// The largest size of this kind, and its row.
    pub max_size: (u64, u64),
}

/// What a whole trace holds, read once per version of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceInfo {
    pub rows: u64,
    /// The largest host index a row names, its row and column (`None`: no row names one).
    pub max_index: Option<(u32, u64, &'static str)>,
    /// Each host name the rows use, with the first row and column naming it, in that order.
    pub names: Vec<(String, u64, &'static str)>,
    /// The tags the rows set, in the order they first appear.
    pub tags: Vec<String>,
    /// The distinct (transport, cc, priority) the rows write, in order of first appearance.
    pub kinds: Vec<RowKind>,
}

/// Read every row of `path`, check it and sum up what the scenario checks need.
fn scan(path: &str) -> Result<TraceInfo, String> {
    let mut r = TraceReader::open(path)?;
    let mut info = TraceInfo { rows: 0, max_index: None, names: Vec::new(), tags: Vec::new(), kinds: Vec::new() };
    let mut names: HashMap<String, ()> = HashMap::new();
    let mut tags: HashMap<String, ()> = HashMap::new();
    while let Some(row) = r.next_row() {
        let row = row?;
        let n = r.row;
        info.rows = n;
        for (h, col) in [(&row.src, "src"), (&row.dst, "dst")] {
            match h {
                HostRef::Index(i) => {
                    if info.max_index.map_or(true, |m| *i > m.0) {
                        info.max_index = Some((*i, n, col));
                    }
                }
                HostRef::Name(s) => {
                    if names.insert(s.clone(), ()).is_none() {
                        info.names.push((s.clone(), n, col));
                    }
                }
            }
        }
        if let Some(t) = &row.tag {
            if tags.insert(t.clone(), ()).is_none() {
                if tags.len() > MAX_TAGS {
                    return Err(format!("{path}, row {n}, column tag: more than {MAX_TAGS} different tags, expected fewer (a tag labels a class of flows, not one flow)"));
                }
                info.tags.push(t.clone());
            }
        }
        match info.kinds.iter_mut().find(|k| k.transport == row.transport && k.cc == row.cc && k.priority == row.priority) {
            Some(k) => {
                if row.size > k.max_size.0 {
                    k.max_size = (row.size, n);
                }
            }
            None => info.kinds.push(RowKind { transport: row.transport, cc: row.cc, priority: row.priority, row: n, max_size: (row.size, n) }),
        }
    }
    Ok(info)
}

/// The most distinct tags a trace may set (tags are numbered in 16 bits across a scenario).
pub const MAX_TAGS: usize = 60_000;

/// What the trace at `path` holds, read once per version of the file (its length and
/// modification time) in a process, or why one of its rows is refused.
pub fn info(path: &str) -> Result<Arc<TraceInfo>, String> {
    type Cache = Mutex<HashMap<PathBuf, (u64, Option<std::time::SystemTime>, Arc<TraceInfo>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    let version = std::fs::metadata(path).ok().map(|m| (m.len(), m.modified().ok()));
    if let Some((len, mtime)) = version {
        if let Some((l, m, i)) = CACHE.get_or_init(Default::default).lock().unwrap().get(&key) {
            if *l == len && *m == mtime {
                return Ok(i.clone());
            }
        }
    }
    let i = Arc::new(scan(path)?);
    if let Some((len, mtime)) = version {
        CACHE.get_or_init(Default::default).lock().unwrap().insert(key, (len, mtime, i.clone()));
    }
    Ok(i)
}

/// A trace's flows as the run reaches them: each row made into a flow with the workload's
/// defaults for what the row leaves empty.
pub struct TraceFlows {
    reader: TraceReader,
    /// The flow a row starts from: the workload's priority, tag and transport.
    template: super::FlowSpec,
    /// Host index of each name a row may use (empty when rows use indices).
    hosts: HashMap<String, HostId>,
    /// Tag number of each tag a row may set.
    tags: HashMap<String, u16>,
}

impl TraceFlows {
    /// The flows of the trace at `path`, already checked by [`info`] and against the fabric.
    pub fn new(path: &str, template: super::FlowSpec, hosts: HashMap<String, HostId>, tags: HashMap<String, u16>) -> Result<TraceFlows, String> {
        Ok(TraceFlows { reader: TraceReader::open(path)?, template, hosts, tags })
    }
}

impl Iterator for TraceFlows {
    type Item = super::FlowSpec;
    fn next(&mut self) -> Option<super::FlowSpec> {
        // every row was checked before the run: a refusal now is a file changed under it
        let r = self.reader.next_row()?.unwrap_or_else(|m| panic!("{m} (the trace changed after the run checked it)"));
        let host = |h: &HostRef| match h {
            HostRef::Index(i) => *i,
            HostRef::Name(n) => *self.hosts.get(n).unwrap_or_else(|| panic!("{}: host \"{n}\" (the trace changed after the run checked it)", self.reader.file)),
        };
        let t = &self.template;
        Some(super::FlowSpec {
            src: host(&r.src),
            dst: host(&r.dst),
            size: r.size,
            start: r.start,
            prio: r.priority.unwrap_or(t.prio),
            tag: r.tag.map_or(t.tag, |n| self.tags[&n]),
            transport: TransportKind::resolve(r.transport, r.cc, t.transport).expect("checked against the workload's transport"),
            ..t.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> String {
        let dir = std::env::temp_dir().join(format!("dcnsim-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    fn rows(path: &str) -> Result<Vec<TraceRow>, String> {
        let mut r = TraceReader::open(path)?;
        let mut out = Vec::new();
        while let Some(row) = r.next_row() {
            out.push(row?);
        }
        Ok(out)
    }

    #[test]
    fn csv_rows_read_with_units_names_and_defaults() {
        let p = write("ok.csv", "# a comment\nsrc,dst,size,start,priority,tag,transport,cc\n0,3,64KB,0us,,,,\nh1,h2,1500B,10us,3,rpc,roce,hpcc\n");
        let r = rows(&p).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0], TraceRow { src: HostRef::Index(0), dst: HostRef::Index(3), size: 64_000, start: SimTime::ZERO, priority: None, tag: None, transport: None, cc: None });
        assert_eq!(r[1].src, HostRef::Name("h1".into()));
        assert_eq!((r[1].size, r[1].start, r[1].priority), (1500, SimTime(10_000_000), Some(3)));
        assert_eq!((r[1].tag.as_deref(), r[1].transport, r[1].cc), (Some("rpc"), Some(TransportKind::Roce), CcName::from_name("hpcc")));
    }

    #[test]
    fn bad_rows_name_the_file_row_and_column() {
        let cases = [
            ("src,dst,size_bytes,start_ps\n0,1,100,0\n0,2,0,5\n", "row 2 (line 3), column size_bytes: invalid value \"0\", expected a size > 0"),
            ("src,dst,size_bytes,start_ps\n0,1,100,50\n0,2,10,5\n", "row 2 (line 3), column start_ps: start 5 ps is before row 1's 50 ps"),
            ("src,dst,size_bytes,start_ps\n4,4,100,0\n", "row 1 (line 2), column dst: invalid value \"4\", expected a host other than src"),
            ("src,dst,size_bytes,start_ps\n0,h1,100,0\n", "column dst: invalid value \"h1\", expected a host written as src is"),
            ("src,dst,size_bytes,start_ps,priority\n0,1,100,0,9\n", "column priority: invalid value \"9\", expected a priority 0..7"),
            ("src,dst,size_bytes,start_ps,cc\n0,1,100,0,vegas\n", "column cc: invalid value \"vegas\", expected one of"),
            ("src,dst,size_bytes,start_ps,transport,cc\n0,1,100,0,udp,dctcp\n", "column cc: invalid value \"dctcp\": UDP runs no congestion control"),
            ("src,dst,size,start_ps\n0,1,10XB,0\n", "column size: invalid value \"10XB\": unit \"XB\" is not known"),
            ("src,dst,size_bytes,start\n0,1,10,5\n", "column start: invalid value \"5\": expected a number with its unit"),
            ("src,dst,size_bytes,start_ps,fct\n", "unknown column \"fct\", expected columns among src, dst"),
            ("src,dst,size_bytes\n", "no column \"start_ps\" (or \"start\")"),
            ("src,dst,size_bytes,size,start_ps\n", "both columns \"size_bytes\" and \"size\""),
            ("src,src,dst,size_bytes,start_ps\n", "column \"src\" appears twice"),
            ("src,dst,size_bytes,start_ps\n0,1,100\n", "does not read as CSV"),
        ];
        for (k, (text, want)) in cases.iter().enumerate() {
            let p = write(&format!("bad{k}.csv"), text);
            let e = rows(&p).unwrap_err();
            assert!(e.starts_with(&p), "{e}");
            assert!(e.contains(want), "case {k}: {e}");
        }
        let e = TraceReader::open("flows.txt").unwrap_err();
        assert!(e.contains("expected a file named *.csv or *.parquet"), "{e}");
        let e = TraceReader::open("/nonexistent/flows.csv").unwrap_err();
        assert!(e.contains("expected a readable trace file (looked for /nonexistent/flows.csv"), "{e}");
    }

    #[test]
    fn info_sums_up_hosts_tags_and_kinds() {
        let p = write("info.csv", "src,dst,size_bytes,start_ps,tag,priority\n0,7,100,0,a,\n2,1,900,1,b,\n3,1,500,1,a,2\n5,0,1000,2,,2\n");
        let i = info(&p).unwrap();
        assert_eq!(i.rows, 4);
        assert_eq!(i.max_index, Some((7, 1, "dst")));
        assert!(i.names.is_empty());
        assert_eq!(i.tags, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(i.kinds.len(), 2);
        assert_eq!((i.kinds[0].priority, i.kinds[0].max_size), (None, (900, 2)));
        assert_eq!((i.kinds[1].priority, i.kinds[1].row, i.kinds[1].max_size), (Some(2), 3, (1000, 4)));
        // a changed file is read again
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&p, "src,dst,size_bytes,start_ps\nh0,h1,100,0\n").unwrap();
        let i = info(&p).unwrap();
        assert_eq!((i.rows, i.names.len(), i.max_index), (1, 2, None));
    }
}
