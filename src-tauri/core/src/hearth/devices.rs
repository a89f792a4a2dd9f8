//! Settings → Devices: pairing the owner's other devices (the phone app, another desktop in
//! companion mode) with this Hearth, the list of paired devices, and revoking one.
//!
//! The pairing host (`crate::pairing::Host`) listens only once the owner first makes an offer —
//! or at start, when devices are paired already, or in the headless home server — and its
//! static key lives in the vault, so a restart keeps every pairing. What a device may do is
//! checked by `hearth::companion` on every request, from the store.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use hearth_protocol::devices::{DevicePairOfferParams, PairedDeviceView, PairingOfferView};
use hearth_protocol::ids::DeviceId;
use secrecy::{ExposeSecret, SecretString};

use super::Hearth;
use crate::error::{CoreError, Result};
use crate::pairing::host_store::{OfferTerms, PairingService, StoredDevices};
use crate::pairing::{Host, HostConfig, StaticKeypair};

/// The vault's name for the host's static private key (hex).
const HOST_KEY_SECRET: &str = "pairing:host_static_key";

impl Hearth {
    /// Starts the pairing host on `listen` (port 0: any free one) unless it serves already;
    /// answers where it listens.
    pub async fn pairing_serve(&self, listen: SocketAddr) -> Result<SocketAddr> {
        let mut running = self.pairing.lock().await;
        if let Some(service) = running.as_ref() {
            return Ok(service.listening);
        }
        let keypair = self.host_keypair().await?;
        let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
            CoreError::Unavailable(format!(
                "Hearth could not listen for your devices on {listen} ({e}); another program may use that port. Set HEARTH_PAIRING_LISTEN to another address and port."
            ))
        })?;
        let listening = listener.local_addr().map_err(|e| CoreError::Unavailable(e.to_string()))?;
        let devices = Arc::new(StoredDevices::new(self.store.clone()));
        let router = super::companion::CompanionRouter::new(self.clone());
        let host = Host::new(keypair, devices.clone(), router, HostConfig::default());
        let serving = host.clone();
        tokio::spawn(async move {
            if let Err(err) = serving.serve(listener).await {
                tracing::warn!(error = %err, "the pairing host stopped");
            }
        });
        let advertised = SocketAddr::new(advertised_ip(listening.ip()), listening.port());
        tracing::info!(%listening, %advertised, "serving paired devices");
        *running = Some(PairingService { host, devices, listening, advertised });
        Ok(listening)
    }

    /// A one-time pairing for a device the owner names, with the scopes chosen for it: the QR
    /// code's text and picture, the short code, and the host's fingerprint. Starts the host on
    /// its configured address if it is not serving. A new offer withdraws the last one.
    pub async fn device_pair_offer(&self, params: &DevicePairOfferParams) -> Result<PairingOfferView> {
        params.validate()?;
        self.pairing_serve(self.config.pairing_listen).await?;
        let running = self.pairing.lock().await;
        let Some(service) = running.as_ref() else {
            return Err(CoreError::Unavailable("the pairing host stopped; try again".into()));
        };
        let issued = service.host.offer_pairing(service.advertised).map_err(|e| CoreError::Unavailable(e.to_string()))?;
        service.devices.set_terms(issued.id, OfferTerms { name: params.name.trim().to_owned(), scopes: params.scopes });
        let uri = issued.offer.to_text();
        let qr_svg = qr_svg(&uri)?;
        Ok(PairingOfferView {
            uri: uri.to_string(),
            qr_svg,
            short_code: issued.offer.secret.short_code().to_string(),
            fingerprint: issued.offer.fingerprint.to_string(),
            address: service.advertised.to_string(),
            expires_at: issued.expires_at,
        })
    }

    /// Every paired device, most recently paired first.
    pub async fn device_list(&self) -> Result<Vec<PairedDeviceView>> {
        Ok(self.store.devices().await?)
    }

    /// Revokes a device: refused from its next request or connection, and its open connections
    /// (with their streams) closed now.
    pub async fn device_revoke(&self, id: &DeviceId) -> Result<PairedDeviceView> {
        let running = self.pairing.lock().await;
        if let Some(service) = running.as_ref()
            && let Ok(wire_id) = id.as_str().parse::<crate::pairing::DeviceId>()
        {
            // Writes the store first, then closes its connections.
            service.host.revoke(&wire_id).await.map_err(|e| CoreError::Unavailable(e.to_string()))?;
        }
        Ok(self.store.revoke_device(id).await?)
    }

    /// At start: serve the devices paired already (a restart keeps its pairings).
    pub(super) async fn serve_paired_devices(&self) {
        let active = match self.store.devices().await {
            Ok(devices) => devices.iter().any(|d| d.revoked_at.is_none()),
            Err(err) => {
                tracing::warn!(error = %err, "could not read the paired devices");
                false
            }
        };
        if active && let Err(err) = self.pairing_serve(self.config.pairing_listen).await {
            tracing::warn!(error = %err, "the pairing host could not start; paired devices cannot connect");
        }
    }

    /// Closes every device's connection (Hearth is closing).
    pub(super) async fn pairing_shutdown(&self) {
        if let Some(service) = self.pairing.lock().await.take() {
            service.host.shutdown();
        }
    }

    /// The host's static key from the vault, made and sealed there on first use. Two processes
    /// on one data folder (the app and `hearth serve`) making it at once keep the one stored
    /// first: each stores its own only if none is there, then both use what is stored.
    async fn host_keypair(&self) -> Result<StaticKeypair> {
        let unreadable = |e: crate::pairing::PairingError| CoreError::Unavailable(format!("the pairing key could not be used: {e}"));
        if self.settings.secret(HOST_KEY_SECRET).await?.is_none() {
            let keypair = StaticKeypair::generate().map_err(unreadable)?;
            let text = SecretString::from(hex::encode(keypair.private_bytes()));
            self.settings.put_secret_if_absent(HOST_KEY_SECRET, &text).await?;
        }
        let stored = self
            .settings
            .secret(HOST_KEY_SECRET)
            .await?
            .ok_or_else(|| CoreError::Unavailable("the pairing key could not be stored in the vault".into()))?;
        let bytes = zeroize::Zeroizing::new(
            hex::decode(stored.expose_secret()).map_err(|_| CoreError::CorruptRow("the stored pairing key is not hex".into()))?,
        );
        StaticKeypair::from_private_bytes(&bytes).map_err(unreadable)
    }
}

/// The address a device should dial: the listening address itself, or for a wildcard, this
/// machine's address on the LAN (the one its route out uses: a UDP socket's `connect` picks
/// it without sending anything), else loopback.
fn advertised_ip(listening: IpAddr) -> IpAddr {
    if !listening.is_unspecified() {
        return listening;
    }
    let routed = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|socket| socket.connect((Ipv4Addr::new(10, 255, 255, 255), 9)).map(|()| socket))
        .and_then(|socket| socket.local_addr());
    match routed {
        Ok(addr) if !addr.ip().is_unspecified() => addr.ip(),
        _ => IpAddr::V4(Ipv4Addr::LOCALHOST),
    }
}

/// The offer's text as a QR code in SVG, for Settings to show.
fn qr_svg(text: &str) -> Result<String> {
    let code = qrcode::QrCode::with_error_correction_level(text.as_bytes(), qrcode::EcLevel::M)
        .map_err(|e| CoreError::Unavailable(format!("the pairing QR code could not be drawn ({e}); type the short code instead")))?;
    Ok(code.render::<qrcode::render::svg::Color<'_>>().min_dimensions(240, 240).quiet_zone(true).build())
}
