//! Regenerate the scenario reference checked into `docs/` from the schema:
//!
//!     cargo run -p dcnsim-core --example gen_reference
//!
//! Writes `docs/scenario-reference.md`, `docs/scenario.schema.json`, the hook table and
//! code links of `docs/architecture.md` and the outputs tables of `docs/user-guide.md`
//! (relative to the workspace root), each atomically: a temporary file in the same
//! directory, then a rename.
use dcnsim_core::scenario::{outputs, reference};
use dcnsim_core::switch::mechanism;
use std::io::Write;
use std::path::{Path, PathBuf};

fn write_atomic(path: &Path, text: &str) -> std::io::Result<bool> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(false);
    }
    let dir = path.parent().expect("a file inside docs/");
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().unwrap().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|_| true)
}

fn main() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let arch = std::fs::read_to_string(root.join(mechanism::ARCHITECTURE_PATH)).expect("docs/architecture.md");
    let arch = mechanism::with_hook_table(&arch);
    let docs = root.join("docs");
    let arch = dcnsim_core::sim::doc_links::with_code_links(&arch, |f| std::fs::read_to_string(docs.join(f)).ok());
    let guide = std::fs::read_to_string(root.join(outputs::USER_GUIDE_PATH)).expect("docs/user-guide.md");
    let guide = outputs::with_outputs_tables(&guide);
    for (rel, text) in [
        (reference::MARKDOWN_PATH, reference::markdown()),
        (reference::JSON_SCHEMA_PATH, reference::json_schema()),
        (mechanism::ARCHITECTURE_PATH, arch),
        (outputs::USER_GUIDE_PATH, guide),
    ] {
        let path = root.join(rel);
        match write_atomic(&path, &text) {
            Ok(true) => println!("wrote {rel}"),
            Ok(false) => println!("{rel} is up to date"),
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                std::process::exit(1);
            }
        }
    }
}
