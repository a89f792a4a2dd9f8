//! The secrets vault: encrypted rows in a real SQLite file, a key file as the key source.

use std::path::Path;
use std::time::Duration;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hearth_core::store::Store;
use hearth_core::vault::{ExposeSecret, KEY_FILE_NAME, KeySource, Keychain, LOCK_FILE_NAME, SecretString, Vault, VaultError};
use zeroize::Zeroizing;

const NAME: &str = "provider:openai:api_key";
const PLAIN: &str = "sk-test-0123456789abcdefghijklmnopqrstuvwxyz";

async fn store(dir: &Path) -> Store {
    Store::open(&dir.join("hearth.db"), Duration::from_secs(5)).await.unwrap()
}

async fn vault(dir: &Path) -> (Store, Vault) {
    let store = store(dir).await;
    let vault = Vault::open(store.clone(), KeySource::file_in(dir)).await.unwrap();
    (store, vault)
}

fn secret(text: &str) -> SecretString {
    SecretString::from(text.to_owned())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn assert_decrypt_error(err: &VaultError, name: &str) {
    assert!(matches!(err, VaultError::Decrypt { name: n } if n == name), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("Hearth could not decrypt the secret {name}: the vault key changed or the data was altered. Enter it again in Settings.")
    );
    assert!(!err.to_string().contains(PLAIN));
}

#[tokio::test]
async fn vault_round_trips_replaces_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, vault) = vault(dir.path()).await;
    assert!(vault.get(NAME).await.unwrap().is_none());

    vault.put(NAME, &secret(PLAIN)).await.unwrap();
    assert_eq!(vault.get(NAME).await.unwrap().unwrap().expose_secret(), PLAIN);

    vault.put(NAME, &secret("sk-second")).await.unwrap();
    assert_eq!(vault.get(NAME).await.unwrap().unwrap().expose_secret(), "sk-second");
    // Empty and non-ASCII secrets survive too.
    vault.put("google:me@example.com:refresh_token", &secret("")).await.unwrap();
    assert_eq!(vault.get("google:me@example.com:refresh_token").await.unwrap().unwrap().expose_secret(), "");
    vault.put("x", &secret("pässwörd ✓")).await.unwrap();
    assert_eq!(vault.get("x").await.unwrap().unwrap().expose_secret(), "pässwörd ✓");

    assert!(vault.delete(NAME).await.unwrap());
    assert!(!vault.delete(NAME).await.unwrap());
    assert!(vault.get(NAME).await.unwrap().is_none());
    assert_eq!(vault.names().await.unwrap(), vec!["google:me@example.com:refresh_token", "x"]);
}

#[tokio::test]
async fn vault_stores_only_ciphertext_with_a_fresh_nonce_per_write() {
    let dir = tempfile::tempdir().unwrap();
    let (store, vault) = vault(dir.path()).await;

    vault.put(NAME, &secret(PLAIN)).await.unwrap();
    let first = store.secret_row(NAME).await.unwrap().unwrap();
    vault.put(NAME, &secret(PLAIN)).await.unwrap();
    let second = store.secret_row(NAME).await.unwrap().unwrap();

    for row in [&first, &second] {
        assert_eq!(row.nonce.len(), 12);
        assert_eq!(row.ciphertext.len(), PLAIN.len() + 16, "ciphertext plus the GCM tag");
        assert!(!contains(&row.ciphertext, PLAIN.as_bytes()));
        assert!(!contains(&row.ciphertext, &PLAIN.as_bytes()[..8]));
        assert_eq!(row.key_id, vault.key_id());
        assert_eq!(row.format, 1);
    }
    assert_ne!(first.nonce, second.nonce);
    assert_ne!(first.ciphertext, second.ciphertext);

    // Nor anywhere in the database file itself (checkpointed, so the WAL is folded in).
    store.close().await;
    let bytes = std::fs::read(dir.path().join("hearth.db")).unwrap();
    assert!(!contains(&bytes, PLAIN.as_bytes()));
    assert!(contains(&bytes, NAME.as_bytes()), "the name is stored in clear");
}

#[tokio::test]
async fn vault_refuses_a_tampered_ciphertext_or_nonce() {
    let dir = tempfile::tempdir().unwrap();
    let (store, vault) = vault(dir.path()).await;
    vault.put(NAME, &secret(PLAIN)).await.unwrap();
    let row = store.secret_row(NAME).await.unwrap().unwrap();

    for index in [0, row.ciphertext.len() / 2, row.ciphertext.len() - 1] {
        let mut tampered = row.clone();
        tampered.ciphertext[index] ^= 0x01;
        store.put_secret_row(&tampered).await.unwrap();
        assert_decrypt_error(&vault.get(NAME).await.unwrap_err(), NAME);
    }
    let mut tampered = row.clone();
    tampered.nonce[0] ^= 0x80;
    store.put_secret_row(&tampered).await.unwrap();
    assert_decrypt_error(&vault.get(NAME).await.unwrap_err(), NAME);
    let mut truncated = row.clone();
    truncated.nonce.pop();
    store.put_secret_row(&truncated).await.unwrap();
    assert_decrypt_error(&vault.get(NAME).await.unwrap_err(), NAME);

    // The untouched row still opens.
    store.put_secret_row(&row).await.unwrap();
    assert_eq!(vault.get(NAME).await.unwrap().unwrap().expose_secret(), PLAIN);
}

#[tokio::test]
async fn vault_refuses_a_row_copied_under_another_name() {
    let dir = tempfile::tempdir().unwrap();
    let (store, vault) = vault(dir.path()).await;
    vault.put(NAME, &secret(PLAIN)).await.unwrap();
    let mut moved = store.secret_row(NAME).await.unwrap().unwrap();
    moved.name = "provider:anthropic:api_key".to_owned();
    store.put_secret_row(&moved).await.unwrap();

    assert_decrypt_error(&vault.get("provider:anthropic:api_key").await.unwrap_err(), "provider:anthropic:api_key");
    assert_eq!(vault.get(NAME).await.unwrap().unwrap().expose_secret(), PLAIN);
}

#[tokio::test]
async fn vault_with_another_key_file_gives_the_clear_error_and_still_lists_names() {
    let dir = tempfile::tempdir().unwrap();
    let (store, vault) = vault(dir.path()).await;
    vault.put(NAME, &secret(PLAIN)).await.unwrap();

    let other_key = dir.path().join("other").join("vault.key");
    let other = Vault::open(store.clone(), KeySource::File(other_key)).await.unwrap();
    assert_ne!(other.key_id(), vault.key_id());
    // names() reads no ciphertext, so it works under any key.
    assert_eq!(other.names().await.unwrap(), vec![NAME]);
    assert_decrypt_error(&other.get(NAME).await.unwrap_err(), NAME);
    assert_eq!(vault.get(NAME).await.unwrap().unwrap().expose_secret(), PLAIN);
}

#[tokio::test]
async fn vault_key_file_is_private_and_reused_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let key_path = dir.path().join("vault.key");
    let (store, vault) = vault(dir.path()).await;
    vault.put(NAME, &secret(PLAIN)).await.unwrap();

    let key = std::fs::read(&key_path).unwrap();
    assert_eq!(key.len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&key_path).unwrap().permissions().mode() & 0o777, 0o600);
    }
    // No temporary file is left beside it.
    let entries: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("vault"))
        .collect();
    assert_eq!(entries, vec!["vault.key"]);
    let key_id = vault.key_id().to_owned();
    drop(vault);
    store.close().await;
    drop(store);

    let (_store, reopened) = vault_in(dir.path()).await;
    assert_eq!(std::fs::read(&key_path).unwrap(), key);
    assert_eq!(reopened.key_id(), key_id);
    assert_eq!(reopened.get(NAME).await.unwrap().unwrap().expose_secret(), PLAIN);
}

/// `open_in` picks an existing key file without asking the keychain.
async fn vault_in(dir: &Path) -> (Store, Vault) {
    let store = store(dir).await;
    let vault = Vault::open_in(store.clone(), dir).await.unwrap();
    assert_eq!(vault.key_source(), &KeySource::file_in(dir));
    (store, vault)
}

#[tokio::test]
async fn vault_refuses_a_key_file_of_the_wrong_length() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let path = dir.path().join("vault.key");
    std::fs::write(&path, b"short").unwrap();
    let err = Vault::open(store, KeySource::File(path.clone())).await.unwrap_err();
    assert!(matches!(err, VaultError::KeyFileInvalid { len: 5, .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()));
    assert_eq!(std::fs::read(&path).unwrap(), b"short", "the file is left as it was");
}

#[tokio::test]
async fn vault_secrets_and_errors_print_no_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, vault) = vault(dir.path()).await;
    let value = secret(PLAIN);
    let printed = format!("{value:?}");
    assert!(printed.contains("[REDACTED]"), "{printed}");
    assert!(!printed.contains(PLAIN) && !printed.contains("sk-"));

    vault.put(NAME, &value).await.unwrap();
    let got = vault.get(NAME).await.unwrap();
    let printed = format!("{got:?} {vault:?}");
    assert!(printed.contains("[REDACTED]"), "{printed}");
    assert!(!printed.contains(PLAIN) && !printed.contains("sk-"));

    // A refused name is not repeated (it may be a key pasted into the wrong field).
    let err = vault.put("sk live key with spaces", &value).await.unwrap_err();
    assert!(matches!(err, VaultError::InvalidName { .. }));
    assert!(!err.to_string().contains("sk live"));
    assert!(vault.get("").await.is_err());
    assert!(vault.get(&"a".repeat(201)).await.is_err());
}

/// A keychain in memory that can be made to fail: `hiccups` calls answer "unavailable" (as a
/// locked or briefly unreachable keychain does), then it works again. Counts every write.
#[derive(Default)]
struct FakeKeychain {
    entries: Mutex<HashMap<(String, String), String>>,
    hiccups: AtomicUsize,
    writes: AtomicUsize,
}

impl FakeKeychain {
    fn hiccup(&self, service: &str, account: &str) -> Result<(), VaultError> {
        let failing = self.hiccups.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
        if failing {
            return Err(VaultError::KeychainUnavailable {
                service: service.to_owned(),
                account: account.to_owned(),
                detail: "the keychain is locked".to_owned(),
            });
        }
        Ok(())
    }

    fn stored(&self) -> Vec<String> {
        self.entries.lock().unwrap().values().cloned().collect()
    }
}

impl Keychain for FakeKeychain {
    fn read(&self, service: &str, account: &str) -> Result<Option<Zeroizing<String>>, VaultError> {
        self.hiccup(service, account)?;
        let found = self.entries.lock().unwrap().get(&(service.to_owned(), account.to_owned())).cloned();
        // Widen the gap between reading "no entry" and writing one, where racing starts fork.
        std::thread::yield_now();
        Ok(found.map(Zeroizing::new))
    }

    fn write(&self, service: &str, account: &str, text: &str) -> Result<(), VaultError> {
        self.hiccup(service, account)?;
        std::thread::yield_now();
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.entries.lock().unwrap().insert((service.to_owned(), account.to_owned()), text.to_owned());
        Ok(())
    }
}

const SECRETS: [(&str, &str); 3] = [
    ("provider:openai:api_key", "sk-test-0123456789abcdefghijklmnopqrstuvwxyz"),
    ("harness:token", "tok-0123456789"),
    ("agui:endpoint_token", "hearth_abcdef0123456789"),
];

#[tokio::test]
async fn issue10_a_keychain_hiccup_never_forks_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let keychain = Arc::new(FakeKeychain::default());

    // First start: the key goes to the keychain, the secrets are sealed with it.
    let first = Vault::open_in_with(store.clone(), dir.path(), keychain.clone()).await.unwrap();
    assert_eq!(first.key_source(), &KeySource::keychain());
    for (name, plain) in SECRETS {
        first.put(name, &secret(plain)).await.unwrap();
    }
    let key_in_keychain = keychain.stored();
    assert_eq!(key_in_keychain.len(), 1);
    assert_eq!(keychain.writes.load(Ordering::SeqCst), 1);
    drop(first);

    // Next start, the keychain does not answer: a clear error, and no second key anywhere.
    keychain.hiccups.store(1, Ordering::SeqCst);
    let err = Vault::open_in_with(store.clone(), dir.path(), keychain.clone()).await.unwrap_err();
    assert!(matches!(err, VaultError::KeychainNeeded { secrets: 3, .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("the keychain is unavailable; unlock it and try again"), "{message}");
    assert!(message.contains("dev.hearth.desktop/vault-data-key"), "{message}");
    for (_, plain) in SECRETS {
        assert!(!message.contains(plain), "{message}");
    }
    assert_eq!(err.to_ipc().code, hearth_protocol::ErrorCode::Unavailable);
    assert!(!dir.path().join(KEY_FILE_NAME).exists(), "no key file was made");
    assert_eq!(keychain.writes.load(Ordering::SeqCst), 1, "nothing was written to the keychain");
    assert_eq!(keychain.stored(), key_in_keychain);
    assert_eq!(keychain.hiccups.load(Ordering::SeqCst), 0, "the hiccup was met");

    // The keychain answers again: the same key, and every secret opens.
    let again = Vault::open_in_with(store.clone(), dir.path(), keychain.clone()).await.unwrap();
    assert_eq!(again.key_source(), &KeySource::keychain());
    for (name, plain) in SECRETS {
        assert_eq!(again.get(name).await.unwrap().unwrap().expose_secret(), plain);
    }
    assert_eq!(keychain.writes.load(Ordering::SeqCst), 1);
    assert_eq!(keychain.stored(), key_in_keychain);
    assert!(!dir.path().join(KEY_FILE_NAME).exists());
}

#[tokio::test]
async fn issue10_without_a_keychain_and_without_secrets_the_key_is_a_private_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let keychain = Arc::new(FakeKeychain::default());

    // No secret is stored yet, so a file key forks nothing.
    keychain.hiccups.store(1, Ordering::SeqCst);
    let vault = Vault::open_in_with(store.clone(), dir.path(), keychain.clone()).await.unwrap();
    assert_eq!(vault.key_source(), &KeySource::file_in(dir.path()));
    vault.put(NAME, &secret(PLAIN)).await.unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(KEY_FILE_NAME)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    // Once there is a key file it wins, keychain or not: the secrets were sealed with it.
    let again = Vault::open_in_with(store.clone(), dir.path(), keychain.clone()).await.unwrap();
    assert_eq!(again.key_id(), vault.key_id());
    assert_eq!(again.get(NAME).await.unwrap().unwrap().expose_secret(), PLAIN);
    assert_eq!(keychain.writes.load(Ordering::SeqCst), 0, "the keychain was never written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn issue10_two_first_starts_racing_on_the_keychain_end_with_one_key() {
    const STARTS: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let keychain = Arc::new(FakeKeychain::default());
    // Each start has its own database connection, as separate processes would.
    let mut stores = Vec::new();
    for _ in 0..STARTS {
        stores.push(store(dir.path()).await);
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(STARTS));
    let starts: Vec<_> = stores
        .iter()
        .cloned()
        .map(|store| {
            let (keychain, barrier, dir) = (keychain.clone(), barrier.clone(), dir.path().to_owned());
            tokio::spawn(async move {
                barrier.wait().await;
                Vault::open_in_with(store, &dir, keychain).await.unwrap()
            })
        })
        .collect();
    let mut vaults = Vec::new();
    for start in starts {
        vaults.push(start.await.unwrap());
    }

    assert_eq!(keychain.writes.load(Ordering::SeqCst), 1, "one key was stored");
    assert_eq!(keychain.stored().len(), 1);
    let key_ids: BTreeSet<_> = vaults.iter().map(|v| v.key_id().to_owned()).collect();
    assert_eq!(key_ids.len(), 1, "every start uses the same key: {key_ids:?}");
    assert!(!dir.path().join(KEY_FILE_NAME).exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(LOCK_FILE_NAME)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // What any start sealed, every start opens.
    for (i, vault) in vaults.iter().enumerate() {
        vault.put(&format!("racer-{i}"), &secret(&format!("secret-{i}"))).await.unwrap();
    }
    for vault in &vaults {
        for i in 0..STARTS {
            assert_eq!(vault.get(&format!("racer-{i}")).await.unwrap().unwrap().expose_secret(), format!("secret-{i}"));
        }
    }
}
