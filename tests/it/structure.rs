//! The crate's structure as ARCHITECTURE.md draws it: every top-level module
//! uses only modules listed before it in the "Module order" list there (so
//! no two modules reach each other), and the read side (reading a
//! generation, search, the site and the statistics both show) reaches
//! nothing of the write side, directly or through the modules it uses, and
//! calls none of the page store's writing methods.
//!
//! Dependencies are read from `crate::NAME` paths in the code (`use`
//! groups included). Test code is left out, as Cargo leaves out
//! dev-dependencies: the `test_support` module, files named `tests.rs` or
//! `*_tests.rs`, and inline `#[cfg(test)] mod … { … }` blocks. Comment lines
//! are left out too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules of the read side, and the write side's modules they must not
/// reach.
const READ_SIDE: &[&str] = &["generation", "stats", "search", "web"];
const WRITE_SIDE: &[&str] = &[
    "ingest", "datadir", "config", "pipeline", "export", "import",
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

/// The top-level module a file under `src/` belongs to, if it belongs to
/// one whose dependencies count.
fn module_of(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src_dir()).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    if ["lib", "main", "bin", "test_support"].contains(&name) {
        return None;
    }
    let file_name = file.file_name()?.to_str()?;
    if file_name == "tests.rs" || file_name.ends_with("_tests.rs") {
        return None;
    }
    Some(name.to_string())
}

/// The code of a file without its comment lines and its inline test
/// modules (`#[cfg(test)]` then `mod … {`, up to the `}` that closes it at
/// the start of a line, as rustfmt writes a top-level module).
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    let mut in_tests = false;
    while let Some(line) = lines.next() {
        if in_tests {
            in_tests = line != "}";
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]" {
            if let Some(next) = lines.peek() {
                if next.starts_with("mod ") && next.trim_end().ends_with('{') {
                    lines.next();
                    in_tests = true;
                    continue;
                }
            }
        }
        if trimmed.starts_with("//") {
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn identifier_at(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The top-level modules `code` names through `crate::`.
fn modules_named(code: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c, d::{e, f}}`: the first name of each item at
            // the group's own depth.
            let mut depth = 0;
            let mut item_start = true;
            for (offset, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_ascii_alphabetic() || c == '_') => {
                        named.insert(identifier_at(&group[offset..]).to_string());
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            named.insert(identifier_at(rest).to_string());
        }
    }
    named
}

/// Each top-level module and the modules it uses.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|file| module_of(file)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|module| (module.clone(), BTreeSet::new()))
        .collect();
    for file in &files {
        let Some(module) = module_of(file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let used = modules_named(&code_of(&text))
            .into_iter()
            .filter(|used| *used != module && modules.contains(used));
        graph.get_mut(&module).unwrap().extend(used);
    }
    graph
}

/// The "Module order" list of ARCHITECTURE.md: lines "N. `name` …".
fn documented_order() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let section = text
        .split("\n## Module order")
        .nth(1)
        .expect("ARCHITECTURE.md has a \"Module order\" section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter_map(|line| {
            let (number, rest) = line.split_once(". `")?;
            number.trim().parse::<u32>().ok()?;
            Some(rest.split('`').next()?.to_string())
        })
        .collect()
}

#[test]
fn every_module_uses_only_modules_listed_before_it() {
    let graph = dependencies();
    let order = documented_order();
    let listed: BTreeSet<&String> = order.iter().collect();
    let modules: BTreeSet<&String> = graph.keys().collect();
    assert_eq!(
        listed, modules,
        "ARCHITECTURE.md's module order lists other modules than src/ has"
    );
    let position = |name: &str| order.iter().position(|module| module == name).unwrap();
    let mut upward = Vec::new();
    for (module, used) in &graph {
        for dependency in used {
            if position(dependency) > position(module) {
                upward.push(format!("{module} uses {dependency}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "modules that use a module listed after them in ARCHITECTURE.md: {upward:?}"
    );
}

/// The modules `module` uses, directly or through others.
fn reached(graph: &BTreeMap<String, BTreeSet<String>>, module: &str) -> BTreeSet<String> {
    let mut reached = BTreeSet::new();
    let mut next = vec![module.to_string()];
    while let Some(module) = next.pop() {
        for used in &graph[&module] {
            if reached.insert(used.clone()) {
                next.push(used.clone());
            }
        }
    }
    reached
}

#[test]
fn the_read_side_reaches_nothing_of_the_write_side() {
    let graph = dependencies();
    for module in READ_SIDE {
        let reached = reached(&graph, module);
        for writer in WRITE_SIDE {
            assert!(!reached.contains(*writer), "{module} reaches {writer}");
        }
    }
}

/// The page store's methods that write: the read side opens the store
/// with `PageStore::open_for_reading` and only gets bodies. (`flush` writes
/// what `put` staged, so it is left out: its name is every writer's.)
const STORE_WRITES: &[&str] = &[
    "PageStore::open(",
    "PageStore::open_with_signer(",
    ".put(",
    ".add_reference(",
    ".delete(",
    ".stage_writes(",
    ".defer_directory_syncs(",
    ".set_references(",
    ".remove_temporary_file(",
];

/// Calls of the store's writing methods in `code`.
fn store_writes(code: &str) -> Vec<&'static str> {
    STORE_WRITES
        .iter()
        .copied()
        .filter(|call| code.contains(call))
        .collect()
}

#[test]
fn the_read_side_writes_nothing_into_the_page_store() {
    let graph = dependencies();
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut writes = Vec::new();
    for module in READ_SIDE {
        // The module and every module it reaches, the store itself aside
        // (where these methods are defined).
        let mut modules = reached(&graph, module);
        modules.insert(module.to_string());
        modules.remove("store");
        for file in &files {
            if module_of(file).is_some_and(|owner| modules.contains(&owner)) {
                let code = code_of(&std::fs::read_to_string(file).unwrap());
                for call in store_writes(&code) {
                    writes.push(format!(
                        "{} (reached by {module}) calls {call}",
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(writes.is_empty(), "{writes:#?}");
    assert_eq!(
        store_writes("let store = PageStore::open_for_reading(root, config)?;\nstore.get(&key)?;"),
        Vec::<&str>::new()
    );
    assert_eq!(store_writes("store.put(&body)?;"), [".put("]);
}

#[test]
fn dependencies_are_read_from_every_form_of_path() {
    let code = code_of(
        "use crate::a::B;\n\
         // crate::commented\n\
         use crate::{c, d::E, f::{g, h}};\n\
         fn x() { crate::i::j(); }\n\
         #[cfg(test)]\n\
         mod tests {\n    use crate::k;\n}\n\
         use crate::l;\n",
    );
    let named: Vec<String> = modules_named(&code).into_iter().collect();
    assert_eq!(named, ["a", "c", "d", "f", "i", "l"]);
}
