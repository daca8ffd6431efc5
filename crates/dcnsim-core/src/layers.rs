//! The crate's layers point one way (docs/architecture.md, "Layers"): a module imports only
//! modules below it, and `switch` and `host`, siblings, never import each other. This test
//! reads every source file's `crate::` paths (test code left out: a test may build a whole
//! scenario) and fails on an import that points up or sideways.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Bottom up; modules of equal rank are siblings.
const RANK: [(&str, u8); 9] = [
    ("sim", 0),
    ("metrics", 1),
    ("net", 2),
    ("switch", 3),
    ("host", 3),
    ("workload", 4),
    ("capture", 5),
    ("engine", 6),
    ("scenario", 7),
];

/// The upward imports still there, each with why, until the seam that removes it is built.
/// The test fails when one goes, so that the list only shrinks.
const KNOWN: [(&str, &str, &str); 1] = [(
    "net/packet.rs",
    "switch",
    "a packet carries its mechanism's control frame or message as the typed enums the \
     mechanism list generates (`switch::Frame`, `switch::Msg`), in its one cache line",
)];

fn rank(m: &str) -> Option<u8> {
    RANK.iter().find(|r| r.0 == m).map(|r| r.1)
}

/// `text` without its `#[cfg(test)]` modules (inline ones cut out; file ones recorded in
/// `test_files`) and without comments.
fn code_of(path: &Path, text: &str, test_files: &mut BTreeSet<PathBuf>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_start();
        if l.starts_with("#[cfg(test)]") && i + 1 < lines.len() {
            let next = lines[i + 1].trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
            if let Some(name) = next.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                test_files.insert(path.with_file_name(format!("{name}.rs")));
                test_files.insert(path.with_file_name(name).join("mod.rs"));
                i += 2;
                continue;
            }
            if next.starts_with("mod ") && next.ends_with('{') {
                let mut depth = 0i64;
                let mut j = i + 1;
                loop {
                    depth += lines[j].matches('{').count() as i64 - lines[j].matches('}').count() as i64;
                    j += 1;
                    if depth == 0 {
                        break;
                    }
                }
                i = j;
                continue;
            }
        }
        let code = l.split("//").next().unwrap_or("");
        out.push_str(code);
        out.push('\n');
        i += 1;
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (file relative to src, its layer, a layer it imports) for every import of another layer.
fn imports(src: &Path) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut test_files = BTreeSet::new();
    let code: Vec<(PathBuf, String)> = files.iter().map(|f| (f.clone(), code_of(f, &std::fs::read_to_string(f).unwrap(), &mut test_files))).collect();
    let mut out = Vec::new();
    for (f, text) in code {
        if test_files.contains(&f) {
            continue;
        }
        let rel = f.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        if rank(&top).is_none() {
            continue;
        }
        let mut seen = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            let m: String = text[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if m != top && rank(&m).is_some() {
                seen.insert(m);
            }
        }
        out.extend(seen.into_iter().map(|m| (rel.clone(), top.clone(), m)));
    }
    out
}

#[test]
fn layers_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let all = imports(&src);
    // the scan sees real imports: the engine uses every layer below it
    for below in ["sim", "metrics", "net", "switch", "host", "workload", "capture"] {
        assert!(all.iter().any(|(_, from, to)| from == "engine" && to == below), "the scan found no engine -> {below} import");
    }
    let mut wrong = Vec::new();
    let mut known_seen = BTreeSet::new();
    for (file, from, to) in &all {
        if rank(to) < rank(from) {
            continue;
        }
        if let Some(k) = KNOWN.iter().find(|k| k.0 == file && k.1 == to) {
            known_seen.insert(k.0);
            continue;
        }
        let how = if rank(to) == rank(from) { "sideways, to a sibling" } else { "upward" };
        wrong.push(format!("{file}: {from} imports {to} ({how})"));
    }
    assert!(wrong.is_empty(), "imports against the layers (docs/architecture.md, \"Layers\"):\n{}", wrong.join("\n"));
    for k in KNOWN {
        assert!(known_seen.contains(k.0), "{} no longer imports {}: take it off KNOWN", k.0, k.1);
    }
}

/// The scan catches an upward import, and leaves test modules and comments out.
#[test]
fn the_scan_sees_an_upward_import_and_skips_tests() {
    let mut t = BTreeSet::new();
    let text = "use crate::sim::SimTime;\n// crate::engine in a comment\nfn f() { crate::scenario::load(); }\n#[cfg(test)]\nmod tests {\n    use crate::engine::Sim;\n}\n#[cfg(test)]\nmod proptests;\n";
    let code = code_of(Path::new("src/net/x.rs"), text, &mut t);
    assert!(code.contains("crate::scenario") && code.contains("crate::sim"));
    assert!(!code.contains("crate::engine"));
    assert!(t.contains(Path::new("src/net/proptests.rs")));
}
