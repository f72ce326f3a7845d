//! Where a data directory was taken from, for the directory itself and for
//! the errors that name it.

use std::fmt;
use std::path::PathBuf;

/// The environment variable naming the data directory.
pub const ENV_VAR: &str = "NETHEAT_DATA";

/// The default location relative to the project root.
pub const DEFAULT_RELATIVE: &str = "../shared/data";

/// How the data directory was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirSource {
    /// The `--data-dir` flag (or an explicit argument from code).
    Flag,
    /// The `NETHEAT_DATA` environment variable.
    Env,
    /// `../shared/data` next to this project root.
    Default {
        /// The project root it was taken relative to.
        root: PathBuf,
    },
    /// No project root was found and no flag or variable was given.
    Nothing,
}

impl DirSource {
    /// `flag`, `env`, `default` or `none`.
    pub fn as_str(&self) -> &'static str {
        match self {
            DirSource::Flag => "flag",
            DirSource::Env => "env",
            DirSource::Default { .. } => "default",
            DirSource::Nothing => "none",
        }
    }
}

impl fmt::Display for DirSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DirSource::Flag => write!(f, "the --data-dir flag"),
            DirSource::Env => write!(f, "the {ENV_VAR} environment variable"),
            DirSource::Default { root } => {
                write!(f, "default: {DEFAULT_RELATIVE} relative to the project root {}", root.display())
            }
            DirSource::Nothing => write!(f, "default: no netheat project root found, no flag, no {ENV_VAR}"),
        }
    }
}
