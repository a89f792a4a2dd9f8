//! Pictures of pages, kept on disk for the browser card: named by the SHA-256 of their bytes,
//! the newest [`MAX_SHOTS`] kept.
//!
//! The model gets only the id; the card asks for the picture by it (`browser_screenshot`), so
//! a reloaded conversation still shows what the agent saw.

use std::path::PathBuf;

use sha2::Digest;

/// How many pictures are kept.
pub const MAX_SHOTS: usize = 200;

/// The pictures' folder.
#[derive(Debug, Clone)]
pub struct Shots {
    dir: PathBuf,
}

impl Shots {
    /// Pictures in `dir` (made, private, on the first save).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// Keeps `png` and answers its id; the oldest past [`MAX_SHOTS`] are removed.
    pub fn save(&self, png: &[u8]) -> std::io::Result<String> {
        crate::store::Store::create_private_dir(&self.dir).map_err(std::io::Error::other)?;
        let id = hex::encode(sha2::Sha256::digest(png))[..32].to_owned();
        let path = self.dir.join(format!("{id}.png"));
        if path.exists() {
            // Seen again: it is the newest now, not the first to go.
            let _ = std::fs::File::options().append(true).open(&path).and_then(|f| f.set_modified(std::time::SystemTime::now()));
        } else {
            // Written whole under another name first: a reader never sees half a picture.
            let partial = self.dir.join(format!("{id}.partial"));
            std::fs::write(&partial, png)?;
            std::fs::rename(&partial, &path)?;
            self.prune()?;
        }
        Ok(id)
    }

    /// The picture `id`, or `None` when there is none (or `id` is not one of ours).
    pub fn get(&self, id: &str) -> std::io::Result<Option<Vec<u8>>> {
        if id.len() != 32 || !id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Ok(None);
        }
        match std::fs::read(self.dir.join(format!("{id}.png"))) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    fn prune(&self) -> std::io::Result<()> {
        let mut kept: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&self.dir)?
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "png"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if kept.len() <= MAX_SHOTS {
            return Ok(());
        }
        kept.sort();
        for (_, path) in kept.iter().take(kept.len() - MAX_SHOTS) {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_saved_picture_comes_back_by_its_id_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let shots = Shots::new(dir.path().join("shots"));
        let id = shots.save(b"\x89PNG one").unwrap();
        assert_eq!(shots.save(b"\x89PNG one").unwrap(), id, "the same bytes, the same id");
        assert_eq!(shots.get(&id).unwrap().unwrap(), b"\x89PNG one");
        assert!(shots.get("../../etc/passwd").unwrap().is_none());
        assert!(shots.get(&"0".repeat(32)).unwrap().is_none());
        for n in 0..MAX_SHOTS + 5 {
            shots.save(format!("png {n}").as_bytes()).unwrap();
        }
        let count = std::fs::read_dir(dir.path().join("shots")).unwrap().count();
        assert_eq!(count, MAX_SHOTS);
    }
}
