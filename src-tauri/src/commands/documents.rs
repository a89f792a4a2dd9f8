//! `document_*` commands: the Documents screen, the owner's folders and the search over them.
//! Only the window calls them (the companion reach table never forwards them).

use hearth_protocol::IpcError;
use hearth_protocol::documents::{
    DocFolderAddParams, DocFolderListResponse, DocFolderRemoveParams, DocPreview, DocPreviewParams, DocSearchParams, DocSearchResponse,
};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// The folders, with their counts and skipped notes.
#[tauri::command]
pub async fn document_folder_list(state: State<'_, AppState>) -> Result<DocFolderListResponse, IpcError> {
    state.ready().await?.document_folder_list().await.map_err(|e| e.to_ipc())
}

/// Adds a folder and indexes it.
#[tauri::command]
pub async fn document_folder_add(state: State<'_, AppState>, params: serde_json::Value) -> Result<DocFolderListResponse, IpcError> {
    let params: DocFolderAddParams = parse("document_folder_add", params)?;
    params.validate()?;
    state.ready().await?.document_folder_add(&params).await.map_err(|e| e.to_ipc())
}

/// Removes a folder and forgets its text.
#[tauri::command]
pub async fn document_folder_remove(state: State<'_, AppState>, params: serde_json::Value) -> Result<DocFolderListResponse, IpcError> {
    let params: DocFolderRemoveParams = parse("document_folder_remove", params)?;
    params.validate()?;
    state.ready().await?.document_folder_remove(&params).await.map_err(|e| e.to_ipc())
}

/// Reads every folder again.
#[tauri::command]
pub async fn document_rescan(state: State<'_, AppState>) -> Result<DocFolderListResponse, IpcError> {
    state.ready().await?.document_rescan().await.map_err(|e| e.to_ipc())
}

/// The hits for a search.
#[tauri::command]
pub async fn document_search(state: State<'_, AppState>, params: serde_json::Value) -> Result<DocSearchResponse, IpcError> {
    let params: DocSearchParams = parse("document_search", params)?;
    params.validate()?;
    state.ready().await?.document_search(&params).await.map_err(|e| e.to_ipc())
}

/// A hit's text around its first match.
#[tauri::command]
pub async fn document_preview(state: State<'_, AppState>, params: serde_json::Value) -> Result<DocPreview, IpcError> {
    let params: DocPreviewParams = parse("document_preview", params)?;
    params.validate()?;
    state.ready().await?.document_preview(&params).await.map_err(|e| e.to_ipc())
}
