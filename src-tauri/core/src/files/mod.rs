//! The owner's files: PDFs kept as `<data>/files/<id>.pdf` (mode 0600) with a metadata row.
//! Filling always writes a new file; an original's bytes never change.

mod name;
mod private;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

use base64::Engine as _;
use hearth_protocol::files::{FileDetail, FileRenderResponse, FileSource, FileView};
use hearth_protocol::pdf::{FieldValues, PdfInfo};

pub use name::{is_format_char, safe_display_name, sanitize_file_name};
pub use private::{remove_dir_if_present, sha256_hex, write_private};

use crate::error::{CoreError, Result};
use crate::pdf::{Budget, Limits, PdfEngine, PdfError};
use crate::store::files::FileRow;
use crate::store::{Store, now_ms};

struct Inner {
    store: Store,
    dir: PathBuf,
    library: PathBuf,
    engine: OnceLock<std::result::Result<PdfEngine, PdfError>>,
    /// PDF work in flight, stopped or not: a stopped operation keeps its slot until its thread
    /// really ends, so Stops cannot pile up threads behind the PDFium lock.
    pdf_slots: Arc<tokio::sync::Semaphore>,
    /// A test hook called at every budget check of PDF work (see [`FileStore::set_pdf_probe`]).
    probe: std::sync::Mutex<Option<PdfProbe>>,
}

/// What [`FileStore::set_pdf_probe`] installs.
pub type PdfProbe = Arc<dyn Fn(crate::pdf::Spent) + Send + Sync>;

/// How many PDF operations may run (or still be ending after a Stop) at once.
const PDF_SLOTS: usize = 2;

/// Files and the PDF engine that reads them. Cheap to clone.
#[derive(Clone)]
pub struct FileStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStore").field("dir", &self.inner.dir).finish_non_exhaustive()
    }
}

impl FileStore {
    /// Files under `dir`; libpdfium is loaded from `library` on first use, so Hearth starts
    /// (and says what to do) even when it is missing.
    pub fn new(store: Store, dir: PathBuf, library: PathBuf) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                dir,
                library,
                engine: OnceLock::new(),
                pdf_slots: Arc::new(tokio::sync::Semaphore::new(PDF_SLOTS)),
                probe: std::sync::Mutex::new(None),
            }),
        }
    }

    /// Calls `probe` at every budget check of later PDF work (tests hold an operation in the
    /// middle of its work with it).
    #[doc(hidden)]
    pub fn set_pdf_probe(&self, probe: Option<PdfProbe>) {
        *self.inner.probe.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = probe;
    }

    /// The bound PDFium.
    pub fn engine(&self) -> Result<PdfEngine> {
        let bound = self.inner.engine.get_or_init(|| PdfEngine::load(&self.inner.library));
        bound.clone().map_err(CoreError::Pdf)
    }

    /// Checks `bytes`, stores them as file `file_id` and records it. Importing the same id
    /// again returns the first record.
    pub async fn import(&self, file_id: &str, bytes: Vec<u8>, name: &str, source_ref: &str) -> Result<FileRow> {
        self.import_unless_stopped(file_id, bytes, name, source_ref, &CancellationToken::new()).await
    }

    /// [`FileStore::import`] that honours `cancel`: a Stop before the file is written ends it
    /// with [`CoreError::Stopped`] and nothing written.
    pub async fn import_unless_stopped(
        &self,
        file_id: &str,
        bytes: Vec<u8>,
        name: &str,
        source_ref: &str,
        cancel: &CancellationToken,
    ) -> Result<FileRow> {
        self.import_from(FileSource::MailAttachment, file_id, bytes, name, source_ref, cancel).await
    }

    /// A PDF the owner chose from their disk, for the window's `operation_id`. The file's id is
    /// derived from it (the window never names a stored file), and the same operation again
    /// returns the first record — or a conflict when it carries other bytes.
    pub async fn import_from_disk(&self, operation_id: &str, bytes: Vec<u8>, name: &str) -> Result<FileRow> {
        let file_id = format!("disk-{}", &sha256_hex(format!("disk:{operation_id}").as_bytes())[..32]);
        if let Some(existing) = self.inner.store.get_file(&file_id).await?
            && existing.sha256 != sha256_hex(&bytes)
        {
            return Err(CoreError::Conflict(format!(
                "This import was already made with other bytes ({}); choose the file again to import it anew.",
                existing.name
            )));
        }
        self.import_from(FileSource::Disk, &file_id, bytes, name, "", &CancellationToken::new()).await
    }

    /// [`FileStore::import_unless_stopped`] of a PDF exported from the computer's workspace
    /// (`path`, the path it came from).
    pub async fn import_from_computer(
        &self,
        file_id: &str,
        bytes: Vec<u8>,
        name: &str,
        path: &str,
        cancel: &CancellationToken,
    ) -> Result<FileRow> {
        self.import_from(FileSource::Computer, file_id, bytes, name, path, cancel).await
    }

    /// [`FileStore::import_unless_stopped`] of a PDF the agent's browser downloaded from `url`.
    pub async fn import_from_web(
        &self,
        file_id: &str,
        bytes: Vec<u8>,
        name: &str,
        url: &str,
        cancel: &CancellationToken,
    ) -> Result<FileRow> {
        self.import_from(FileSource::Web, file_id, bytes, name, url, cancel).await
    }

    async fn import_from(
        &self,
        source: FileSource,
        file_id: &str,
        bytes: Vec<u8>,
        name: &str,
        source_ref: &str,
        cancel: &CancellationToken,
    ) -> Result<FileRow> {
        if let Some(existing) = self.inner.store.get_file(file_id).await? {
            return Ok(existing);
        }
        let (info, bytes) = self
            .blocking(cancel, move |engine, budget| crate::pdf::inspect_within(&engine, &bytes, &budget).map(|info| (info, bytes)))
            .await?;
        stopped_before_write(cancel)?;
        self.store_new(file_id, &bytes, &info, sanitize_file_name(name), source, Some(source_ref), None).await
    }

    /// Fills a copy of `parent_id` with `values` as file `file_id`. Filling under the same id
    /// again returns the first copy.
    pub async fn fill(&self, parent_id: &str, values: FieldValues, file_id: &str) -> Result<FileRow> {
        self.fill_unless_stopped(parent_id, values, file_id, &CancellationToken::new()).await
    }

    /// [`FileStore::fill`] that honours `cancel`: a Stop before the copy is written ends it
    /// with [`CoreError::Stopped`] and nothing written. The PDF work itself checks the Stop at
    /// every object it reads (see `pdf::budget`); a single PDFium call cannot be cut short, but
    /// PDFium only sees documents whose structure was checked first.
    pub async fn fill_unless_stopped(
        &self,
        parent_id: &str,
        values: FieldValues,
        file_id: &str,
        cancel: &CancellationToken,
    ) -> Result<FileRow> {
        stopped_before_write(cancel)?;
        if let Some(existing) = self.inner.store.get_file(file_id).await? {
            return Ok(existing);
        }
        let (parent, bytes) = self.read(parent_id).await?;
        let (info, filled) = self
            .blocking(cancel, move |engine, budget| {
                let filled = crate::pdf::fill_inspected_within(&engine, &bytes, &values, &budget)?;
                Ok((filled.info, filled.bytes))
            })
            .await?;
        let name = filled_name(&parent.name);
        stopped_before_write(cancel)?;
        self.store_new(file_id, &filled, &info, name, FileSource::Filled, None, Some(parent_id)).await
    }

    /// A file's bytes, refused when they are not the ones recorded.
    pub async fn read(&self, file_id: &str) -> Result<(FileRow, Vec<u8>)> {
        let file = self.row(file_id).await?;
        if file.deleted_at.is_some() {
            return Err(CoreError::NotFound(format!("The file {} was deleted.", file.name)));
        }
        let bytes = tokio::fs::read(&file.path)
            .await
            .map_err(|err| CoreError::NotFound(format!("The file {} could not be read ({err}).", file.name)))?;
        if sha256_hex(&bytes) != file.sha256 {
            return Err(CoreError::Conflict(format!(
                "The file {} changed on disk outside Hearth, so Hearth will not use it. Import it again.",
                file.name
            )));
        }
        Ok((file, bytes))
    }

    /// A file with its pages and fields (current values included).
    pub async fn detail(&self, file_id: &str) -> Result<FileDetail> {
        let (file, bytes) = self.read(file_id).await?;
        let info: PdfInfo =
            self.blocking(&CancellationToken::new(), move |engine, budget| crate::pdf::inspect_within(&engine, &bytes, &budget)).await?;
        Ok(FileDetail { file: self.view(&file).await?, info })
    }

    /// One page as a PNG data URL.
    pub async fn render(&self, file_id: &str, page: u16, scale: f32) -> Result<FileRenderResponse> {
        let (_, bytes) = self.read(file_id).await?;
        let rendered = self
            .blocking(&CancellationToken::new(), move |engine, budget| {
                crate::pdf::render_page_within(&engine, &bytes, page, scale, &budget)
            })
            .await?;
        let data_url = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&rendered.png));
        Ok(FileRenderResponse { data_url, width: rendered.width, height: rendered.height })
    }

    /// Each page's text.
    pub async fn text(&self, file_id: &str) -> Result<Vec<String>> {
        self.text_unless_stopped(file_id, &CancellationToken::new()).await
    }

    /// Each page's text, the extraction ended by `cancel` (a task's Stop or Pause).
    pub async fn text_unless_stopped(&self, file_id: &str, cancel: &CancellationToken) -> Result<Vec<String>> {
        let (_, bytes) = self.read(file_id).await?;
        self.blocking(cancel, move |engine, budget| crate::pdf::extract_text_within(&engine, &bytes, &budget)).await
    }

    /// Files, newest first.
    pub async fn list(&self) -> Result<Vec<FileView>> {
        let rows = self.inner.store.list_files(500).await?;
        let mut views = Vec::with_capacity(rows.len());
        for row in &rows {
            views.push(self.view(row).await?);
        }
        Ok(views)
    }

    /// The wire view, with the parent's name.
    pub async fn view(&self, row: &FileRow) -> Result<FileView> {
        let parent_name = match &row.parent_id {
            Some(id) => self.inner.store.get_file(id).await?.map(|p| p.name),
            None => None,
        };
        Ok(row.view(parent_name))
    }

    /// Deletes a file's bytes; its record (name, hash) stays for receipts.
    pub async fn delete(&self, file_id: &str) -> Result<()> {
        let file = self.row(file_id).await?;
        if self.inner.store.mark_file_deleted(file_id).await?
            && let Err(err) = std::fs::remove_file(&file.path)
        {
            tracing::warn!(file_id, error = %err, "a deleted file's bytes could not be removed");
        }
        Ok(())
    }

    async fn row(&self, file_id: &str) -> Result<FileRow> {
        self.inner.store.get_file(file_id).await?.ok_or_else(|| CoreError::NotFound(format!("There is no file {file_id} in Files.")))
    }

    #[expect(clippy::too_many_arguments, reason = "the file's id, bytes, facts, name, source and lineage, each a column")]
    async fn store_new(
        &self,
        file_id: &str,
        bytes: &[u8],
        info: &PdfInfo,
        name: String,
        source: FileSource,
        source_ref: Option<&str>,
        parent_id: Option<&str>,
    ) -> Result<FileRow> {
        if !hearth_protocol::ids::is_valid_id(file_id) {
            return Err(CoreError::InvalidInput(format!("{file_id:?} is not a valid file id.")));
        }
        let path = self.inner.dir.join(format!("{file_id}.pdf"));
        write_private(&path, bytes).map_err(|source| CoreError::DataDir { path: path.clone(), source })?;
        let row = FileRow {
            id: file_id.to_owned(),
            name,
            path: path.to_string_lossy().into_owned(),
            size: i64::try_from(bytes.len()).unwrap_or(i64::MAX),
            pages: info.pages,
            fields: u16::try_from(info.fields.len()).unwrap_or(u16::MAX),
            source,
            source_ref: source_ref.map(str::to_owned),
            parent_id: parent_id.map(str::to_owned),
            sha256: sha256_hex(bytes),
            created_at: now_ms(),
            deleted_at: None,
        };
        self.inner.store.insert_file(&row).await.map_err(Into::into)
    }

    /// Runs PDFium off the async threads (it is blocking and serialized).
    /// Runs PDF work on a blocking thread within a [`Budget`] that `cancel` ends. A Stop ends
    /// the wait at once (the work itself ends at its next budget check and its result is
    /// dropped), so a Stop never waits for a PDF.
    async fn blocking<T: Send + 'static>(
        &self,
        cancel: &CancellationToken,
        work: impl FnOnce(PdfEngine, Budget) -> std::result::Result<T, PdfError> + Send + 'static,
    ) -> Result<T> {
        let engine = self.engine()?;
        let slots = Arc::clone(&self.inner.pdf_slots);
        let slot = tokio::select! {
            slot = slots.acquire_owned() => slot
                .map_err(|_| CoreError::Conflict("PDF work is shutting down. Try again.".into()))?,
            () = cancel.cancelled() => return Err(pdf_error(PdfError::Stopped)),
        };
        let probe = self.inner.probe.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let budget = match probe {
            Some(probe) => Budget::with_probe(Limits::STANDARD, Some(cancel.clone()), probe),
            None => Budget::new(Limits::STANDARD, Some(cancel.clone())),
        };
        let running = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            work(engine, budget)
        });
        let finished = tokio::select! {
            finished = running => finished,
            () = cancel.cancelled() => return Err(pdf_error(PdfError::Stopped)),
        };
        finished.map_err(|err| CoreError::Conflict(format!("PDF work stopped unexpectedly ({err}). Try again.")))?.map_err(pdf_error)
    }
}

fn pdf_error(err: PdfError) -> CoreError {
    match err {
        PdfError::Stopped => CoreError::Stopped(err.to_string()),
        other => CoreError::Pdf(other),
    }
}

fn stopped_before_write(cancel: &CancellationToken) -> Result<()> {
    if cancel.is_cancelled() {
        return Err(CoreError::Stopped("Stopped before the file was written; nothing was saved.".into()));
    }
    Ok(())
}

fn filled_name(parent: &str) -> String {
    let stem = parent.strip_suffix(".pdf").or_else(|| parent.strip_suffix(".PDF")).unwrap_or(parent);
    sanitize_file_name(&format!("{stem} (filled).pdf"))
}
