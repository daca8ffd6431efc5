//! Links from the docs into the code that stay true: a markdown link whose text names a
//! function in backticks and whose target is a source file with a line anchor,
//! [`Sim::switch_rx`](../crates/dcnsim-core/src/engine/switch_path.rs#L15), points at the
//! line that defines the function (`fn switch_rx`). `with_code_links` moves each anchor to
//! where its function is now; a test holds docs/architecture.md to it and `gen_reference`
//! rewrites it.

/// `doc` with every code link's line anchor set to the line defining the function its text
/// names (the last `::` segment of the text in backticks). `read` gives a link target's
/// file (the path as written, relative to the doc). Panics, naming the link, where the file
/// cannot be read or defines no such function: a link that points nowhere is a doc bug.
pub fn with_code_links(doc: &str, read: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(at) = rest.find("](") {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let Some(close) = after.find(')') else {
            rest = after;
            break;
        };
        let target = &after[2..close];
        let name = before.rsplit_once("[`").and_then(|(_, t)| t.strip_suffix('`')).map(|t| t.rsplit("::").next().unwrap_or(t));
        match (target.split_once("#L"), name) {
            (Some((file, _)), Some(name)) if file.ends_with(".rs") => {
                let text = read(file).unwrap_or_else(|| panic!("code link to {file}: no such file"));
                let line = text
                    .lines()
                    .position(|l| l.contains(&format!("fn {name}(")) || l.contains(&format!("fn {name}<")))
                    .unwrap_or_else(|| panic!("code link [`{name}`]({target}): {file} defines no fn {name}"));
                out.push_str(&format!("]({file}#L{})", line + 1));
            }
            _ => out.push_str(&after[..=close]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::with_code_links;

    /// An anchor moves to the defining line; other links stay as written.
    #[test]
    fn a_code_link_points_at_the_line_that_defines_its_function() {
        let code = "struct S;\nimpl S {\n    pub(super) fn go(&self) {}\n}\n";
        let read = |f: &str| (f == "a.rs").then(|| code.to_string());
        let doc = "See [`S::go`](a.rs#L1) and [the book](https://example.org/x) and [`b`](b.md).";
        assert_eq!(with_code_links(doc, read), "See [`S::go`](a.rs#L3) and [the book](https://example.org/x) and [`b`](b.md).");
        assert_eq!(with_code_links("an open [`x`](a.rs#L9", read), "an open [`x`](a.rs#L9", "an unclosed link is left as written");
    }

    /// docs/architecture.md's code links point where their functions are (regenerate with
    /// `cargo run -p dcnsim-core --example gen_reference`).
    #[test]
    fn architecture_code_links_are_up_to_date() {
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs");
        let doc = std::fs::read_to_string(format!("{docs}/architecture.md")).unwrap();
        let fixed = with_code_links(&doc, |f| std::fs::read_to_string(format!("{docs}/{f}")).ok());
        assert!(doc == fixed, "docs/architecture.md's code links are stale: run `cargo run -p dcnsim-core --example gen_reference`");
    }
}
