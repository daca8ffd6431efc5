#![allow(unexpected_cfgs)] // pyo3 0.22 create_exception! checks a feature this crate does not declare
//! PyO3 bindings for dcnsim-core: a thin layer that converts between Python
//! and the core. Errors map to Python exceptions under `DcnsimError`; panics
//! are caught and never cross into Python as anything but `SimulationError`.

use dcnsim_core::metrics::Table;
use dcnsim_core::scenario::{self, Document, RunOptions};
use dcnsim_core::sim::SimTime;
use dcnsim_core::Sim;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Large tables in 2 MiB pages: a large fabric's run is bound by the memory system, and with
/// 4 KiB pages nearly every random read also misses the TLB (`dcnsim_core::sim::large_pages`).
#[global_allocator]
static ALLOC: dcnsim_core::sim::large_pages::Allocator = dcnsim_core::sim::large_pages::Allocator;

create_exception!(dcnsim._core, DcnsimError, PyException, "Base class of every dcnsim error.");
create_exception!(dcnsim._core, ScenarioError, DcnsimError, "The scenario is invalid: the message names the key, the value and what was expected.");
create_exception!(dcnsim._core, SimulationError, DcnsimError, "The simulation failed internally (a bug: please report it).");

fn parse(text: &str, format: &str) -> PyResult<Document> {
    let r = match format {
        "toml" => Document::from_toml(text),
        "json" => Document::from_json(text),
        other => return Err(ScenarioError::new_err(format!("format: invalid value \"{other}\", expected \"toml\" or \"json\""))),
    };
    r.map_err(|e| ScenarioError::new_err(e.to_string()))
}

fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<PyObject> {
    Ok(match v {
        serde_json::Value::Null => py.None(),
        serde_json::Value::Bool(b) => b.into_py(py),
        serde_json::Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_py(py)
            } else if let Some(i) = n.as_i64() {
                i.into_py(py)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_py(py)
            }
        }
        serde_json::Value::String(s) => s.into_py(py),
        serde_json::Value::Array(a) => {
            let l = PyList::empty_bound(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_py(py)
        }
        serde_json::Value::Object(o) => {
            let d = PyDict::new_bound(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_py(py)
        }
    })
}

fn table_to_py(py: Python<'_>, t: &Table) -> PyResult<PyObject> {
    let d = PyDict::new_bound(py);
    for (name, col) in &t.columns {
        let bytes = PyBytes::new_bound(py, &col.to_le_bytes());
        d.set_item(name, (col.dtype(), bytes))?;
    }
    Ok(d.into_py(py))
}

fn guard<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|e| {
        let msg = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "unknown panic".into());
        SimulationError::new_err(format!("internal error: {msg}"))
    })
}

/// Parse and validate a scenario; returns name, description, variants, hosts, switches.
#[pyfunction]
#[pyo3(signature = (text, format = "toml", variant = None))]
fn validate(py: Python<'_>, text: &str, format: &str, variant: Option<&str>) -> PyResult<PyObject> {
    checked(py, &parse(text, format)?, variant)
}

/// `validate`'s answer for one variant of a parsed document.
fn checked(py: Python<'_>, doc: &Document, variant: Option<&str>) -> PyResult<PyObject> {
    let s = guard(|| scenario::check(doc, variant))?.map_err(|e| ScenarioError::new_err(e.to_string()))?;
    json_to_py(py, &serde_json::to_value(&s).unwrap())
}

/// `merged`'s answer for one variant of a parsed document.
fn merged_of(py: Python<'_>, doc: &Document, variant: Option<&str>) -> PyResult<PyObject> {
    let t = doc.merged(variant).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    json_to_py(py, &serde_json::to_value(&t).map_err(|e| ScenarioError::new_err(e.to_string()))?)
}

/// Each of `variants` (None: the base) checked as `validate` checks it, with its merged
/// document (as `merged` gives it) and the scenario it resolves to as JSON text (sizes,
/// rates and times in the engine's units, so "200KB" and "0.2MB" read the same: what
/// `identical_variants` compares), from one parse of `text`: what a sweep asks of every
/// grid point, which otherwise parsed the point's text twice per variant.
#[pyfunction]
#[pyo3(signature = (text, format = "toml", variants = vec![None]))]
fn check_variants(py: Python<'_>, text: &str, format: &str, variants: Vec<Option<String>>) -> PyResult<PyObject> {
    let doc = parse(text, format)?;
    let out = PyList::empty_bound(py);
    for v in &variants {
        let resolved = doc.resolve(v.as_deref()).map_err(|e| ScenarioError::new_err(e.to_string()))?;
        let resolved = serde_json::to_string(&resolved).map_err(|e| ScenarioError::new_err(e.to_string()))?;
        out.append((checked(py, &doc, v.as_deref())?, merged_of(py, &doc, v.as_deref())?, resolved))?;
    }
    Ok(out.into_py(py))
}

/// What a run of the base (`variant=None`) or a variant is warned of before it starts
/// (`scenario::document_advice`): {"document_warnings": [...], "warnings": [...],
/// "variants": [names]}, without building the fabric.
#[pyfunction]
#[pyo3(signature = (text, format = "toml", variant = None))]
fn advice(py: Python<'_>, text: &str, format: &str, variant: Option<&str>) -> PyResult<PyObject> {
    let doc = parse(text, format)?;
    let (s, all) = doc.resolve_all(variant).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    // a scenario too large to run is refused here, before any warning about it is printed
    guard(|| scenario::estimate::check(&s, 1))?.map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let (d, w) = guard(|| scenario::document_advice(&doc, &s, &all, variant))?.map_err(|e| ScenarioError::new_err(e.to_string()))?;
    json_to_py(py, &serde_json::json!({ "document_warnings": d, "warnings": w, "variants": doc.variant_names() }))
}

/// The memory limit, in bytes, that a scenario's estimate is held to before it runs and
/// the process's resident memory while it runs: `DCNSIM_MEMORY_LIMIT`, else half the
/// machine's memory.
#[pyfunction]
fn memory_limit() -> PyResult<u64> {
    scenario::estimate::limit().map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// The memory a run of the base (`variant=None`) or a variant on `threads` threads is
/// estimated to need before it starts (`scenario::estimate`): (bytes, the key that drives
/// most of it, what it counts).
#[pyfunction]
#[pyo3(signature = (text, format = "toml", variant = None, threads = 1))]
fn memory_estimate(text: &str, format: &str, variant: Option<&str>, threads: usize) -> PyResult<(u128, String, String)> {
    let doc = parse(text, format)?;
    let s = doc.resolve(variant).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let e = guard(|| scenario::estimate::estimate(&s, threads))?.map_err(|e| ScenarioError::new_err(e.to_string()))?;
    Ok((e.bytes, e.key, e.what))
}

/// `text` with each word too long to quote whole cut to its ends (`sim::error::cut_long_words`,
/// what every scenario error does): the command line's error lines of its own.
#[pyfunction]
fn cut_long_words(text: &str) -> String {
    dcnsim_core::sim::error::cut_long_words(text)
}

/// The base (`variant=None`) or a variant merged into it, unvalidated, as a dict.
#[pyfunction]
#[pyo3(signature = (text, format = "toml", variant = None))]
fn merged(py: Python<'_>, text: &str, format: &str, variant: Option<&str>) -> PyResult<PyObject> {
    merged_of(py, &parse(text, format)?, variant)
}

/// A size, rate or duration as the scenario files write them: (value in bytes, bit/s or
/// ps, the unit's name), or None for anything else.
#[pyfunction]
fn quantity(text: &str) -> Option<(f64, &'static str)> {
    use dcnsim_core::sim::units;
    if let Some(b) = units::parse_size(text) {
        return Some((b as f64, "B"));
    }
    if let Some(r) = units::parse_rate(text) {
        return Some((r as f64, "bps"));
    }
    units::parse_duration(text).map(|t| (t.0 as f64, "ps"))
}

/// The PFC headroom the engine derives for a link of `rate_bps` whose round trip
/// (propagation both ways and the switch latency at each end) is `round_trip_ps`, with
/// frames of `mtu` bytes (`PfcParams::derived_headroom`), for studies that size a buffer
/// to hold it.
#[pyfunction]
fn pfc_headroom(rate_bps: u64, round_trip_ps: u64, mtu: u32) -> u64 {
    dcnsim_core::switch::pfc::PfcParams::derived_headroom(rate_bps, dcnsim_core::sim::SimTime(round_trip_ps), mtu)
}

/// A running simulation.
#[pyclass(module = "dcnsim._core")]
struct Simulation {
    sim: Sim,
    name: String,
    variant: Option<String>,
    arrivals_end: SimTime,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, format = "toml", seed = None, variant = None, check_invariants = false, threads = 1))]
    fn new(text: &str, format: &str, seed: Option<u64>, variant: Option<&str>, check_invariants: bool, threads: usize) -> PyResult<Self> {
        let doc = parse(text, format)?;
        let s = doc.resolve(variant).map_err(|e| ScenarioError::new_err(e.to_string()))?;
        let opts = RunOptions { seed, check_invariants, threads };
        let sim = guard(|| scenario::build(&s, &opts))?.map_err(|e| ScenarioError::new_err(e.to_string()))?;
        let arrivals_end = s.scenario.arrivals_for.map(|d| d.0).unwrap_or(s.scenario.max_time.0);
        Ok(Simulation { sim, name: s.scenario.name.clone(), variant: variant.map(String::from), arrivals_end })
    }

    #[getter]
    fn now_ps(&self) -> u64 {
        self.sim.now().0
    }
    #[getter]
    fn max_time_ps(&self) -> u64 {
        self.sim.max_time().0
    }
    #[getter]
    fn arrivals_end_ps(&self) -> u64 {
        self.arrivals_end.0
    }
    #[getter]
    fn events(&self) -> u64 {
        self.sim.events()
    }
    #[getter]
    fn flows_total(&self) -> usize {
        self.sim.flows_total().max(self.sim.flows_planned())
    }
    #[getter]
    fn flows_finished(&self) -> usize {
        self.sim.flows_finished()
    }
    /// Partitions the run is split into (1: one thread).
    #[getter]
    fn partitions(&self) -> usize {
        self.sim.partitions()
    }
    #[getter]
    fn done(&self) -> bool {
        self.sim.done()
    }

    #[getter]
    fn tags(&self) -> Vec<String> {
        self.sim.tags().to_vec()
    }

    /// Hand out finished flows' rows as they become final (`take_flows`) instead of
    /// keeping them to the end; before the run.
    fn stream_flows(&mut self) {
        self.sim.stream_flows();
    }

    /// The flows table's rows that became final since the last call (None: none), in id
    /// order; `results` then holds only the rows after them.
    fn take_flows(&mut self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        match guard(|| self.sim.take_final_flows())? {
            Some(t) => Ok(Some(table_to_py(py, &t)?)),
            None => Ok(None),
        }
    }

    /// Advance to `t_ps` (or the end of the run). Releases the GIL.
    fn run_until(&mut self, py: Python<'_>, t_ps: u64) -> PyResult<()> {
        let sim = &mut self.sim;
        py.allow_threads(|| guard(|| sim.run_until(SimTime(t_ps))))
    }

    /// Result tables and summary at the current time.
    fn results(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let r = guard(|| self.sim.results())?;
        let d = PyDict::new_bound(py);
        d.set_item("flows", table_to_py(py, &r.flows)?)?;
        d.set_item("ports", table_to_py(py, &r.ports)?)?;
        d.set_item("queues", table_to_py(py, &r.queues)?)?;
        d.set_item("timeseries", table_to_py(py, &r.timeseries)?)?;
        d.set_item("queue_series", table_to_py(py, &r.queue_series)?)?;
        d.set_item("tags", r.tags.clone())?;
        d.set_item("nodes", r.nodes.clone())?;
        if let Some(c) = &r.capture {
            d.set_item("capture", pyo3::types::PyBytes::new_bound(py, c))?;
        }
        let mut summary = r.summary.clone();
        summary["scenario"] = serde_json::Value::String(self.name.clone());
        summary["variant"] = self.variant.clone().map(serde_json::Value::String).unwrap_or(serde_json::Value::Null);
        d.set_item("summary", json_to_py(py, &summary)?)?;
        Ok(d.into_py(py))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DcnsimError", m.py().get_type_bound::<DcnsimError>())?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type_bound::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(advice, m)?)?;
    m.add_function(wrap_pyfunction!(merged, m)?)?;
    m.add_function(wrap_pyfunction!(check_variants, m)?)?;
    m.add_function(wrap_pyfunction!(memory_limit, m)?)?;
    m.add_function(wrap_pyfunction!(memory_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(cut_long_words, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(pfc_headroom, m)?)?;
    m.add_class::<Simulation>()?;
    Ok(())
}
