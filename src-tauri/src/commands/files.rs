//! `file_*` commands: the Files screen.

use hearth_protocol::IpcError;
use hearth_protocol::files::{
    FileDeleteParams, FileDetail, FileFillParams, FileGetParams, FileImportParams, FileListResponse, FileRenderParams, FileRenderResponse,
    FileView,
};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// Files, newest first.
#[tauri::command]
pub async fn file_list(state: State<'_, AppState>) -> Result<FileListResponse, IpcError> {
    let files = state.ready().await?.file_list().await.map_err(|e| e.to_ipc())?;
    Ok(FileListResponse { files })
}

/// One file with its pages and fields.
#[tauri::command]
pub async fn file_get(state: State<'_, AppState>, params: serde_json::Value) -> Result<FileDetail, IpcError> {
    let params: FileGetParams = parse("file_get", params)?;
    params.validate()?;
    state.ready().await?.file_get(&params.file_id).await.map_err(|e| e.to_ipc())
}

/// One page as a PNG.
#[tauri::command]
pub async fn file_render(state: State<'_, AppState>, params: serde_json::Value) -> Result<FileRenderResponse, IpcError> {
    let params: FileRenderParams = parse("file_render", params)?;
    params.validate()?;
    state.ready().await?.file_render(&params).await.map_err(|e| e.to_ipc())
}

/// Fills a new copy (the original never changes).
#[tauri::command]
pub async fn file_fill(state: State<'_, AppState>, params: serde_json::Value) -> Result<FileView, IpcError> {
    let params: FileFillParams = parse("file_fill", params)?;
    params.validate()?;
    state.ready().await?.file_fill(&params).await.map_err(|e| e.to_ipc())
}

/// Imports a PDF the owner chose from their disk.
#[tauri::command]
pub async fn file_import(state: State<'_, AppState>, params: serde_json::Value) -> Result<FileView, IpcError> {
    let params: FileImportParams = parse("file_import", params)?;
    params.validate()?;
    state.ready().await?.file_import(&params).await.map_err(|e| e.to_ipc())
}

/// Deletes a file's bytes (its record stays, so receipts still name it).
#[tauri::command]
pub async fn file_delete(state: State<'_, AppState>, params: serde_json::Value) -> Result<(), IpcError> {
    let params: FileDeleteParams = parse("file_delete", params)?;
    params.validate()?;
    state.ready().await?.file_delete(&params.file_id).await.map_err(|e| e.to_ipc())
}
