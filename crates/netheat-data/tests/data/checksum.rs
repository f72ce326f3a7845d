//! Checksums: a modified file is reported and never parsed; verification is cached.

use netheat_data::verify::{is_verified, sha256_hex};
use netheat_data::{find, load_cdf, status, DataDir, DataError, Status};

use crate::{real, TempDir};

const NAME: &str = "cdf-dctcp-hkust";

/// The registered bytes of the small HKUST DCTCP CDF (from the real data dir).
fn original() -> Option<Vec<u8>> {
    let dir = real()?;
    Some(std::fs::read(dir.join(find(NAME).unwrap().path)).expect("read real file"))
}

#[test]
fn modified_copy_is_a_checksum_mismatch_and_is_not_parsed() {
    // Works without the real data too: any content differs from the registered hash.
    let mut bytes = original().unwrap_or_else(|| b"0 0\n10000 0.15\n30000000 1\n".to_vec());
    // Still a perfectly valid CDF, so only the checksum can refuse it.
    let text = String::from_utf8(bytes.clone()).unwrap().replace("0.15", "0.16");
    bytes = text.into_bytes();
    let t = TempDir::new();
    let ds = find(NAME).unwrap();
    let file = t.write(ds.path, &bytes);
    let dir = DataDir::explicit(&t.0);

    let e = load_cdf(&dir, NAME).unwrap_err();
    let DataError::ChecksumMismatch { expected, actual, file: f, .. } = &e else { panic!("{e}") };
    assert_eq!(expected, ds.sha256);
    assert_eq!(actual, &sha256_hex(&bytes));
    assert_eq!(f, &file);
    let msg = e.to_string();
    assert!(msg.contains("checksum mismatch") && msg.contains(&file.display().to_string()), "{msg}");
    assert_eq!(status(&dir, ds).unwrap(), Status::ChecksumMismatch { actual: sha256_hex(&bytes) });
    assert!(!is_verified(&dir, ds), "a mismatch must never be cached");
    // Asking again still refuses it.
    assert!(matches!(load_cdf(&dir, NAME), Err(DataError::ChecksumMismatch { .. })));
}

#[test]
fn verification_is_cached_and_a_later_change_is_caught() {
    let Some(bytes) = original() else { return };
    let t = TempDir::new();
    let ds = find(NAME).unwrap();
    let file = t.write(ds.path, &bytes);
    let dir = DataDir::explicit(&t.0);
    assert!(!is_verified(&dir, ds));
    let first = load_cdf(&dir, NAME).unwrap();
    assert!(is_verified(&dir, ds), "a successful load is cached");
    assert_eq!(load_cdf(&dir, NAME).unwrap(), first);
    // Replace the file with different content (different size): the cache no longer applies.
    let mut changed = bytes.clone();
    changed.extend_from_slice(b"\n");
    std::fs::write(&file, &changed).unwrap();
    assert!(!is_verified(&dir, ds));
    assert!(matches!(load_cdf(&dir, NAME), Err(DataError::ChecksumMismatch { .. })));
}

#[test]
fn missing_file_has_missing_status() {
    let t = TempDir::new();
    let dir = DataDir::explicit(&t.0);
    assert_eq!(status(&dir, find(NAME).unwrap()).unwrap(), Status::Missing);
}
