//! The source documentation trees: `.tar.xz` archives holding `NAME/...`,
//! read into memory as a sorted map of paths (files, symbolic links, folders).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

/// One entry of a tree.
pub enum Node {
    File { data: Vec<u8>, mtime: i64 },
    Link { target: String },
    Dir,
}

/// A documentation tree: paths relative to its root (`""` is the root folder,
/// `en/mod/core.html` a file), in sorted order.
pub struct Tree {
    nodes: BTreeMap<String, Node>,
}

/// What a path names once symbolic links are followed.
pub enum Found<'a> {
    File {
        path: String,
        data: &'a [u8],
        mtime: i64,
    },
    Dir {
        path: String,
    },
}

impl Tree {
    /// Reads `SOURCES/NAME.tar.xz`, keeping what lies under `NAME/`.
    pub fn load(sources: &Path, name: &str) -> Result<Tree> {
        let path = sources.join(format!("{name}.tar.xz"));
        let file = File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut tar_bytes = Vec::new();
        lzma_rs::xz_decompress(&mut BufReader::new(file), &mut tar_bytes)
            .map_err(|error| anyhow!("{} is not a readable xz file: {error:?}", path.display()))?;
        let mut tree = Tree {
            nodes: BTreeMap::new(),
        };
        tree.nodes.insert(String::new(), Node::Dir);
        let top = format!("{name}/");
        let mut archive = tar::Archive::new(&tar_bytes[..]);
        let entries = archive
            .entries()
            .with_context(|| format!("{} is not a tar archive", path.display()))?;
        for entry in entries {
            let mut entry =
                entry.with_context(|| format!("bad tar entry in {}", path.display()))?;
            let entry_path = entry.path()?.to_string_lossy().into_owned();
            let Some(inner) = entry_path.strip_prefix(&top) else {
                continue;
            };
            let inner = inner.trim_end_matches('/').to_string();
            if inner.is_empty() {
                continue;
            }
            let kind = entry.header().entry_type();
            let node = if kind.is_file() {
                let mut data = Vec::with_capacity(entry.size() as usize);
                entry
                    .read_to_end(&mut data)
                    .with_context(|| format!("cannot read {inner} in {}", path.display()))?;
                let mtime = entry.header().mtime().unwrap_or(0) as i64;
                Node::File { data, mtime }
            } else if kind.is_symlink() {
                let target = entry.link_name()?.ok_or_else(|| {
                    anyhow!("symbolic link {inner} without target in {}", path.display())
                })?;
                Node::Link {
                    target: target.to_string_lossy().into_owned(),
                }
            } else if kind.is_dir() {
                Node::Dir
            } else {
                continue;
            };
            tree.add_parents(&inner);
            tree.nodes.insert(inner, node);
        }
        if tree.nodes.len() < 2 {
            bail!("{} holds nothing under {top}", path.display());
        }
        Ok(tree)
    }

    fn add_parents(&mut self, path: &str) {
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            self.nodes
                .entry(path[..end].to_string())
                .or_insert(Node::Dir);
            end += 1;
        }
    }

    /// Looks `path` up, following symbolic links (at most 8, inside the tree).
    pub fn find(&self, path: &str) -> Option<Found<'_>> {
        let mut current = normalize(path)?;
        for _ in 0..8 {
            match self.nodes.get(&current)? {
                Node::File { data, mtime } => {
                    return Some(Found::File {
                        path: current,
                        data,
                        mtime: *mtime,
                    });
                }
                Node::Dir => return Some(Found::Dir { path: current }),
                Node::Link { target } => {
                    let parent = current.rsplit_once('/').map_or("", |(dir, _)| dir);
                    let joined = if target.starts_with('/') {
                        return None;
                    } else if parent.is_empty() {
                        target.clone()
                    } else {
                        format!("{parent}/{target}")
                    };
                    current = normalize(&joined)?;
                }
            }
        }
        None
    }

    /// The modification time of the newest file.
    pub fn newest_mtime(&self) -> i64 {
        self.nodes
            .values()
            .filter_map(|node| match node {
                Node::File { mtime, .. } => Some(*mtime),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Names directly inside folder `dir` (`""` for the root), folders with a
    /// trailing `/`, in sorted order.
    pub fn children(&self, dir: &str) -> Vec<String> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        self.nodes
            .range(prefix.clone()..)
            .take_while(|(path, _)| path.starts_with(&prefix))
            .filter_map(|(path, node)| {
                let rest = &path[prefix.len()..];
                if rest.is_empty() || rest.contains('/') {
                    return None;
                }
                Some(match node {
                    Node::Dir => format!("{rest}/"),
                    _ => rest.to_string(),
                })
            })
            .collect()
    }
}

/// Resolves `.` and `..` in a relative path; `None` when it climbs out.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn normalizes_relative_paths() {
        assert_eq!(normalize("a/./b/../c.html").as_deref(), Some("a/c.html"));
        assert_eq!(normalize("").as_deref(), Some(""));
        assert_eq!(normalize("../x"), None);
    }
}
