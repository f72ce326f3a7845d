//! Choosing the data directory: `--data-dir` flag, else `NETHEAT_DATA`, else
//! `../shared/data` next to the project root.
//!
//! The project root is the nearest ancestor of the current directory that
//! holds `crates/netheat-data/Cargo.toml` or `python/netheat/__init__.py`;
//! callers can add more candidate roots (the Python package adds its own
//! location), and the root this crate was built in is tried last. The first
//! candidate whose `../shared/data` exists wins; if none does, the first is
//! reported (with every place looked at) when something needs the data.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::error::DataError;
pub use crate::source::{DirSource, DEFAULT_RELATIVE, ENV_VAR};

/// A resolved data directory (it may not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    /// The directory (lexically normalised, absolute when it could be made so).
    pub path: PathBuf,
    /// How it was chosen.
    pub source: DirSource,
    /// Other default candidates that were looked at and did not exist.
    pub also_looked: Vec<PathBuf>,
}

impl DataDir {
    /// A data directory given explicitly (counts as [`DirSource::Flag`]).
    pub fn explicit(path: impl Into<PathBuf>) -> Self {
        Self { path: absolute(&path.into()), source: DirSource::Flag, also_looked: Vec::new() }
    }

    /// Resolves flag > `NETHEAT_DATA` > default, reading the real environment
    /// and current directory.
    pub fn resolve(flag: Option<&Path>) -> Self {
        Self::resolve_with(flag, std::env::var_os(ENV_VAR), &[])
    }

    /// Like [`DataDir::resolve`] with the environment value given and extra
    /// candidate project roots (tried after the one found from the current
    /// directory, before the build-time root). An empty value counts as unset.
    pub fn resolve_with(flag: Option<&Path>, env: Option<OsString>, extra_roots: &[PathBuf]) -> Self {
        if let Some(f) = flag.filter(|f| !f.as_os_str().is_empty()) {
            return Self::explicit(f);
        }
        if let Some(e) = env.filter(|e| !e.is_empty()) {
            return Self { path: absolute(Path::new(&e)), source: DirSource::Env, also_looked: Vec::new() };
        }
        let mut roots: Vec<PathBuf> = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            if let Some(r) = project_root_from(&cwd) {
                roots.push(r);
            }
        }
        roots.extend(extra_roots.iter().map(|r| absolute(r)));
        roots.push(normalise(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")));
        let mut seen: Vec<PathBuf> = Vec::new();
        for r in roots {
            if !seen.contains(&r) {
                seen.push(r);
            }
        }
        let candidates: Vec<(PathBuf, PathBuf)> =
            seen.into_iter().map(|r| (normalise(&r.join(DEFAULT_RELATIVE)), r)).collect();
        let found = candidates.iter().position(|(d, _)| d.is_dir()).unwrap_or(0);
        let also_looked = candidates.iter().enumerate().filter(|(i, _)| *i != found).map(|(_, (d, _))| d.clone());
        let also_looked = also_looked.collect();
        match candidates.get(found) {
            Some((d, r)) => Self { path: d.clone(), source: DirSource::Default { root: r.clone() }, also_looked },
            None => Self { path: PathBuf::from(DEFAULT_RELATIVE), source: DirSource::Nothing, also_looked },
        }
    }

    /// Whether the directory exists.
    pub fn exists(&self) -> bool {
        self.path.is_dir()
    }

    /// `Ok(())` if the directory exists, else [`DataError::MissingDir`].
    pub fn require(&self) -> Result<(), DataError> {
        if self.exists() {
            return Ok(());
        }
        let looked = if self.also_looked.is_empty() {
            String::new()
        } else {
            let v: Vec<String> = self.also_looked.iter().map(|p| p.display().to_string()).collect();
            format!("; also looked at {}", v.join(", "))
        };
        Err(DataError::MissingDir { dir: self.path.clone(), source_desc: self.source.clone(), looked })
    }

    /// Full path of a registry-relative path.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }
}

/// The nearest ancestor of `start` (inclusive) that is a netheat project root.
pub fn project_root_from(start: &Path) -> Option<PathBuf> {
    let start = absolute(start);
    start
        .ancestors()
        .find(|d| d.join("crates/netheat-data/Cargo.toml").is_file() || d.join("python/netheat/__init__.py").is_file())
        .map(Path::to_path_buf)
}

fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map(|c| c.join(p)).unwrap_or_else(|_| p.to_path_buf())
    };
    normalise(&p)
}

/// Removes `.` and resolves `..` lexically (`/a/b/../c` -> `/a/c`).
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
