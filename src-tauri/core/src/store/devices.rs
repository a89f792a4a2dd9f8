//! Paired devices (migration 0032): who may connect to this Hearth as a companion, and what
//! each may do. The pairing host reads a device's row on every request, so a revocation or a
//! narrowed scope holds from the next one.

use hearth_protocol::devices::{DeviceScopes, MAX_DEVICES, PairedDeviceView};
use hearth_protocol::ids::DeviceId;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::error::{Result, StoreError};
use super::{Store, now_ms};

/// A device's id: the hex of the first 16 bytes of the SHA-256 of its public key.
pub fn device_id_of(public_key: &[u8; 32]) -> DeviceId {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(public_key);
    DeviceId::trusted(hex::encode(&digest[..16]))
}

/// A key's fingerprint as people compare it: the same 16 bytes as eight groups of four hex
/// digits (as `pairing::Fingerprint` shows it).
pub fn fingerprint_of(public_key: &[u8; 32]) -> String {
    let id = device_id_of(public_key);
    let hex = id.as_str();
    (0..hex.len()).step_by(4).map(|i| &hex[i..(i + 4).min(hex.len())]).collect::<Vec<_>>().join(" ")
}

const COLUMNS: &str = "id, name, public_key, scopes, paired_at, last_used_at, revoked_at";

fn view(row: &SqliteRow) -> Result<PairedDeviceView> {
    let scopes: String = row.try_get("scopes")?;
    let key: Vec<u8> = row.try_get("public_key")?;
    let key: [u8; 32] = key.try_into().map_err(|_| StoreError::CorruptRow("a paired device's key is not 32 bytes".into()))?;
    Ok(PairedDeviceView {
        id: DeviceId::trusted(row.try_get::<String, _>("id")?),
        name: row.try_get("name")?,
        scopes: serde_json::from_str::<DeviceScopes>(&scopes)
            .map_err(|e| StoreError::CorruptRow(format!("a paired device's scopes could not be read ({e})")))?,
        fingerprint: fingerprint_of(&key),
        paired_at: row.try_get("paired_at")?,
        last_used_at: row.try_get("last_used_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

impl Store {
    /// Records a newly paired device. The same key paired again (after a revocation, say) is
    /// the same device: its name and scopes are replaced and it is no longer revoked. More
    /// than [`MAX_DEVICES`] is a conflict, with nothing written.
    pub async fn pair_device(&self, public_key: &[u8; 32], name: &str, scopes: DeviceScopes) -> Result<PairedDeviceView> {
        let id = device_id_of(public_key);
        let scopes = serde_json::to_string(&scopes).map_err(|e| StoreError::CorruptRow(e.to_string()))?;
        let row = sqlx::query(&format!(
            "INSERT INTO paired_devices (id, name, public_key, scopes, paired_at)
             SELECT ?1, ?2, ?3, ?4, ?5
             WHERE EXISTS (SELECT 1 FROM paired_devices WHERE id = ?1)
                OR (SELECT count(*) FROM paired_devices WHERE revoked_at IS NULL) < ?6
             ON CONFLICT(id) DO UPDATE SET name = excluded.name, scopes = excluded.scopes,
                 paired_at = excluded.paired_at, last_used_at = NULL, revoked_at = NULL
             RETURNING {COLUMNS}"
        ))
        .bind(id.as_str())
        .bind(name)
        .bind(&public_key[..])
        .bind(scopes)
        .bind(now_ms())
        .bind(MAX_DEVICES as i64)
        .fetch_optional(&mut *self.writer().await)
        .await?;
        match row {
            Some(row) => view(&row),
            None => Err(StoreError::Conflict(format!(
                "{MAX_DEVICES} devices are paired already; revoke one in Settings → Devices, then pair again"
            ))),
        }
    }

    /// The device with this key, revoked or not.
    pub async fn device_by_key(&self, public_key: &[u8; 32]) -> Result<Option<PairedDeviceView>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM paired_devices WHERE public_key = ?1"))
            .bind(&public_key[..])
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(view).transpose()
    }

    /// The key a device paired with, and whether it is revoked.
    pub async fn device_key(&self, id: &DeviceId) -> Result<Option<([u8; 32], bool)>> {
        let row = sqlx::query("SELECT public_key, revoked_at IS NOT NULL AS revoked FROM paired_devices WHERE id = ?1")
            .bind(id.as_str())
            .fetch_optional(self.reader())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let key: Vec<u8> = row.try_get("public_key")?;
        let key: [u8; 32] = key.try_into().map_err(|_| StoreError::CorruptRow("a paired device's key is not 32 bytes".into()))?;
        Ok(Some((key, row.try_get("revoked")?)))
    }

    /// The device with this id, revoked or not.
    pub async fn device(&self, id: &DeviceId) -> Result<Option<PairedDeviceView>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM paired_devices WHERE id = ?1"))
            .bind(id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(view).transpose()
    }

    /// Every paired device, most recently paired first.
    pub async fn devices(&self) -> Result<Vec<PairedDeviceView>> {
        let rows =
            sqlx::query(&format!("SELECT {COLUMNS} FROM paired_devices ORDER BY paired_at DESC, id")).fetch_all(self.reader()).await?;
        rows.iter().map(view).collect()
    }

    /// Notes a device's request (Settings shows its last use, to the minute: a device's requests
    /// write at most once a minute, so they do not queue on the one writer leases and the
    /// journal use). A revoked device is not touched.
    pub async fn device_used(&self, id: &DeviceId) -> Result<()> {
        sqlx::query(
            "UPDATE paired_devices SET last_used_at = ?2
             WHERE id = ?1 AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at <= ?2 - 60000)",
        )
        .bind(id.as_str())
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(())
    }

    /// Revokes a device: refused from its next request. Revoking twice keeps the first time.
    pub async fn revoke_device(&self, id: &DeviceId) -> Result<PairedDeviceView> {
        let row =
            sqlx::query(&format!("UPDATE paired_devices SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1 RETURNING {COLUMNS}"))
                .bind(id.as_str())
                .bind(now_ms())
                .fetch_optional(&mut *self.writer().await)
                .await?;
        match row {
            Some(row) => view(&row),
            None => Err(StoreError::NotFound(format!("no paired device {id}"))),
        }
    }
}
