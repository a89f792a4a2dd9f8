//! What may be a document folder: a path the owner typed, made absolute (`~/` is the home
//! folder), canonical (links resolved, so one folder is one row), an existing directory, and
//! not Hearth's own data folder or a folder inside it (its database and files would index
//! themselves). A folder that holds the data folder is allowed; the pass leaves the data folder
//! out.

use std::path::{Path, PathBuf};

/// Why a typed path is not a document folder. Each message says what to do.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FolderError {
    /// Neither absolute nor under `~/`.
    #[error("{0} is not a full path; type one that starts with / or ~/")]
    NotAbsolute(String),
    /// `~/` with no home folder known.
    #[error("this system says no home folder; type the folder's full path")]
    NoHome,
    /// Nothing there, or it cannot be reached.
    #[error("{path} cannot be opened ({detail}); check that it exists and that you may read it")]
    Missing {
        /// As typed.
        path: String,
        /// The system's words.
        detail: String,
    },
    /// A file, not a folder.
    #[error("{0} is a file; add the folder that holds it")]
    NotADirectory(String),
    /// Hearth's own data.
    #[error("{0} is Hearth's own data folder (or inside it); add a folder of your documents instead")]
    HearthData(String),
}

/// The canonical folder for what the owner typed, or why it cannot be one.
pub fn check_folder(typed: &str, data_dir: &Path) -> Result<PathBuf, FolderError> {
    let typed = typed.trim();
    let path = if let Some(rest) = typed.strip_prefix("~/") {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or(FolderError::NoHome)?;
        PathBuf::from(home).join(rest)
    } else {
        PathBuf::from(typed)
    };
    if !path.is_absolute() {
        return Err(FolderError::NotAbsolute(typed.to_owned()));
    }
    let canonical = path.canonicalize().map_err(|err| FolderError::Missing { path: typed.to_owned(), detail: err.kind().to_string() })?;
    if !canonical.is_dir() {
        return Err(FolderError::NotADirectory(canonical.display().to_string()));
    }
    let data = data_dir.canonicalize().unwrap_or_else(|_| data_dir.to_path_buf());
    if canonical.starts_with(&data) {
        return Err(FolderError::HearthData(canonical.display().to_string()));
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_an_existing_directory_outside_hearths_data_is_a_folder() {
        let root = std::env::temp_dir().join(format!("hearth-folder-{}", std::process::id()));
        let data = root.join("data");
        let docs = root.join("docs");
        std::fs::create_dir_all(data.join("inner")).unwrap();
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("a.txt"), "a").unwrap();
        let docs_text = docs.to_str().unwrap();
        assert_eq!(check_folder(docs_text, &data).unwrap(), docs.canonicalize().unwrap());
        assert_eq!(check_folder(&format!("{docs_text}/../docs"), &data).unwrap(), docs.canonicalize().unwrap());
        assert!(matches!(check_folder("docs", &data), Err(FolderError::NotAbsolute(_))));
        assert!(matches!(check_folder(&format!("{docs_text}/none"), &data), Err(FolderError::Missing { .. })));
        assert!(matches!(check_folder(&format!("{docs_text}/a.txt"), &data), Err(FolderError::NotADirectory(_))));
        assert!(matches!(check_folder(data.to_str().unwrap(), &data), Err(FolderError::HearthData(_))));
        assert!(matches!(check_folder(data.join("inner").to_str().unwrap(), &data), Err(FolderError::HearthData(_))));
        // A folder holding the data folder is allowed (the pass leaves the data folder out).
        assert!(check_folder(root.to_str().unwrap(), &data).is_ok());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
