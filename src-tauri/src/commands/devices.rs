//! `device_*` commands: Settings → Devices, pairing the owner's other devices with this Hearth.
//! Only the window calls them: the reach table (`hearth_protocol::devices`) never lets a paired
//! device pair, list or revoke devices.

use hearth_protocol::IpcError;
use hearth_protocol::devices::{DevicePairOfferParams, DeviceRevokeParams, PairedDeviceView, PairingOfferView};
use tauri::State;

use crate::AppState;
use crate::ipc::parse;

/// The paired devices, most recently paired first.
#[tauri::command]
pub async fn device_list(state: State<'_, AppState>) -> Result<Vec<PairedDeviceView>, IpcError> {
    state.ready().await?.device_list().await.map_err(|e| e.to_ipc())
}

/// A one-time pairing offer (a QR code and a short code) for a device with the scopes chosen.
#[tauri::command]
pub async fn device_pair_offer(state: State<'_, AppState>, params: serde_json::Value) -> Result<PairingOfferView, IpcError> {
    let params: DevicePairOfferParams = parse("device_pair_offer", params)?;
    params.validate()?;
    state.ready().await?.device_pair_offer(&params).await.map_err(|e| e.to_ipc())
}

/// Revokes a device: refused from its next request, its open streams closed.
#[tauri::command]
pub async fn device_revoke(state: State<'_, AppState>, params: serde_json::Value) -> Result<PairedDeviceView, IpcError> {
    let params: DeviceRevokeParams = parse("device_revoke", params)?;
    state.ready().await?.device_revoke(&params.id).await.map_err(|e| e.to_ipc())
}
