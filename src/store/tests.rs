//! Tests of the page store as a whole: round trips, store modes under forced
//! collisions, crashes, concurrency (threads and processes), corruption.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;

use super::durable::failpoint::{self, WriteFailpoint};
use super::location::{is_block_file_name, is_temporary_file_name};
use super::*;

/// The file-per-block layout, which these tests are about (`packed_tests.rs`
/// has the packed layout's).
fn files_config() -> StoreConfig {
    StoreConfig {
        format: StoreFormat::Files,
        ..StoreConfig::default()
    }
}

fn open_store(root: &Path, mode: StoreMode) -> PageStore {
    let config = StoreConfig {
        mode,
        ..files_config()
    };
    PageStore::open(root, config).expect("open store")
}

/// Every body collides with every other.
fn constant_signature(_body: &[u8]) -> Signature {
    Signature(0)
}

fn open_colliding_store(root: &Path, mode: StoreMode) -> PageStore {
    let config = StoreConfig {
        mode,
        ..files_config()
    };
    PageStore::open_with_signer(root, config, constant_signature).expect("open store")
}

/// Every file under `directory`, recursively.
fn files_under(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current).expect("list directory") {
            let entry = entry.expect("directory entry");
            if entry.file_type().expect("file type").is_dir() {
                pending.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    files
}

fn file_name_of(path: &Path) -> &str {
    path.file_name()
        .and_then(|name| name.to_str())
        .expect("utf-8 file name")
}

fn block_files(store: &PageStore) -> Vec<PathBuf> {
    let depth = store.layout().depth;
    files_under(store.root())
        .into_iter()
        .filter(|path| is_block_file_name(file_name_of(path), depth))
        .collect()
}

fn temporary_files(store: &PageStore) -> Vec<PathBuf> {
    files_under(store.root())
        .into_iter()
        .filter(|path| is_temporary_file_name(file_name_of(path)))
        .collect()
}

fn block_path(store: &PageStore, key: &ContentKey) -> PathBuf {
    store
        .location_of(key)
        .expect("location")
        .block_path(key.overflow)
}

#[test]
fn page_store_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<PageStore>();
}

// ---------------------------------------------------------------- round trip

fn body_strategy() -> impl Strategy<Value = Vec<u8>> {
    let shared_pool: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"<html><body>same page</body></html>".to_vec(),
        b"<p>repeated</p>".repeat(64),
        vec![0u8; 1000],
    ];
    prop_oneof![
        2 => prop::sample::select(shared_pool),
        1 => prop::collection::vec(any::<u8>(), 0..600),
        1 => prop::collection::vec(prop::sample::select(b"<ab> \n".to_vec()), 0..3000),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_counts_and_full_deletion(
        bodies in prop::collection::vec(body_strategy(), 0..14),
        compare in any::<bool>(),
    ) {
        let directory = tempfile::tempdir().unwrap();
        let mode = if compare { StoreMode::Compare } else { StoreMode::Regular };
        let store = open_store(directory.path(), mode);

        let mut expected: HashMap<Vec<u8>, (ContentKey, u64)> = HashMap::new();
        for body in &bodies {
            let outcome = store.put(body).unwrap();
            prop_assert_eq!(outcome.original_size, body.len() as u64);
            match expected.get_mut(body) {
                Some((key, count)) => {
                    prop_assert!(!outcome.stored_new);
                    prop_assert_eq!(outcome.key, *key);
                    *count += 1;
                }
                None => {
                    prop_assert!(outcome.stored_new);
                    prop_assert_eq!(outcome.key.overflow, 0);
                    expected.insert(body.clone(), (outcome.key, 1));
                }
            }
        }
        for (body, (key, count)) in &expected {
            prop_assert_eq!(&store.get(key).unwrap(), body);
            prop_assert_eq!(store.references(key).unwrap(), *count);
        }
        let stats = store.stats().unwrap();
        prop_assert_eq!(stats.blocks, expected.len() as u64);
        prop_assert_eq!(stats.references, bodies.len() as u64);
        prop_assert_eq!(stats.original_bytes, expected.keys().map(|body| body.len() as u64).sum::<u64>());
        prop_assert_eq!(stats.referenced_bytes, bodies.iter().map(|body| body.len() as u64).sum::<u64>());
        prop_assert_eq!(stats.corrupt_blocks, 0);
        prop_assert_eq!(block_files(&store).len(), expected.len());

        for (key, count) in expected.values() {
            for remaining in (0..*count).rev() {
                let outcome = store.delete(key).unwrap();
                if remaining == 0 {
                    prop_assert_eq!(outcome, DeleteOutcome::Removed);
                } else {
                    prop_assert_eq!(outcome, DeleteOutcome::Decremented { remaining });
                }
            }
            prop_assert!(store.get(key).unwrap_err().is_not_found());
        }
        prop_assert!(block_files(&store).is_empty());
        prop_assert!(temporary_files(&store).is_empty());
        prop_assert_eq!(store.stats().unwrap(), StoreStats::default());
    }
}

// ---------------------------------------------------------------- store modes

#[test]
fn force_new_writes_a_new_block_for_every_put() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding_store(directory.path(), StoreMode::ForceNew);
    let bodies: [&[u8]; 4] = [b"aaaa", b"aaaa", b"bbbb", b"cc"];
    let mut keys = Vec::new();
    for (index, body) in bodies.iter().enumerate() {
        let outcome = store.put(body).unwrap();
        assert!(outcome.stored_new);
        assert_eq!(outcome.key.signature, Signature(0));
        assert_eq!(outcome.key.volume, 0);
        assert_eq!(outcome.key.overflow, index as u32);
        keys.push(outcome.key);
    }
    for (key, body) in keys.iter().zip(bodies) {
        assert_eq!(store.get(key).unwrap(), body);
        assert_eq!(store.references(key).unwrap(), 1);
    }
    assert_eq!(block_files(&store).len(), 4);
}

#[test]
fn regular_separates_sizes_and_takes_same_size_as_a_fake_duplicate() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding_store(directory.path(), StoreMode::Regular);

    let first = store.put(b"aaaa").unwrap();
    assert!(first.stored_new);
    assert_eq!(first.key.overflow, 0);

    // Same signature, different size: a detected collision, kept apart.
    let shorter = store.put(b"bb").unwrap();
    assert!(shorter.stored_new);
    assert_eq!(shorter.key.overflow, 1);

    // Same signature, same size, different bytes: the fake duplicate the
    // paper warns about. The body is not stored; its key reads "aaaa".
    let fake = store.put(b"cccc").unwrap();
    assert!(!fake.stored_new);
    assert_eq!(fake.key, first.key);
    assert_eq!(store.references(&first.key).unwrap(), 2);
    assert_eq!(store.get(&fake.key).unwrap(), b"aaaa");

    // A real duplicate of the overflow block finds it.
    let again = store.put(b"bb").unwrap();
    assert!(!again.stored_new);
    assert_eq!(again.key, shorter.key);
    assert_eq!(store.references(&shorter.key).unwrap(), 2);
    assert_eq!(store.get(&shorter.key).unwrap(), b"bb");
    assert_eq!(block_files(&store).len(), 2);
}

#[test]
fn compare_keeps_same_size_bodies_apart() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding_store(directory.path(), StoreMode::Compare);

    let first = store.put(b"aaaa").unwrap();
    let shorter = store.put(b"bb").unwrap();
    let same_size = store.put(b"cccc").unwrap();
    assert_eq!(
        [
            first.key.overflow,
            shorter.key.overflow,
            same_size.key.overflow
        ],
        [0, 1, 2]
    );
    assert!(first.stored_new && shorter.stored_new && same_size.stored_new);

    let first_again = store.put(b"aaaa").unwrap();
    let same_size_again = store.put(b"cccc").unwrap();
    assert!(!first_again.stored_new && !same_size_again.stored_new);
    assert_eq!(first_again.key, first.key);
    assert_eq!(same_size_again.key, same_size.key);

    assert_eq!(store.get(&first.key).unwrap(), b"aaaa");
    assert_eq!(store.get(&shorter.key).unwrap(), b"bb");
    assert_eq!(store.get(&same_size.key).unwrap(), b"cccc");
    assert_eq!(store.references(&first.key).unwrap(), 2);
    assert_eq!(store.references(&shorter.key).unwrap(), 1);
    assert_eq!(store.references(&same_size.key).unwrap(), 2);
    assert_eq!(block_files(&store).len(), 3);
}

#[test]
fn one_bit_signature_spreads_over_two_locations() {
    fn one_bit_signature(body: &[u8]) -> Signature {
        Signature(body.len() as u128 % 2)
    }
    let directory = tempfile::tempdir().unwrap();
    let config = StoreConfig {
        mode: StoreMode::Compare,
        ..files_config()
    };
    let store = PageStore::open_with_signer(directory.path(), config, one_bit_signature).unwrap();
    let bodies: Vec<Vec<u8>> = (0..12u8)
        .map(|length| vec![b'x' + length % 3; usize::from(length)])
        .collect();
    let keys: Vec<ContentKey> = bodies
        .iter()
        .map(|body| store.put(body).unwrap().key)
        .collect();
    for (key, body) in keys.iter().zip(&bodies) {
        assert_eq!(key.volume, (body.len() % 2) as u16);
        assert_eq!(&store.get(key).unwrap(), body);
    }
    assert_eq!(block_files(&store).len(), 12);
}

#[test]
fn lookups_scan_past_a_deleted_overflow_block() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding_store(directory.path(), StoreMode::Regular);
    let keys: Vec<ContentKey> = [&b"a"[..], b"bb", b"ccc"]
        .iter()
        .map(|body| store.put(body).unwrap().key)
        .collect();
    assert_eq!(
        keys.iter().map(|key| key.overflow).collect::<Vec<_>>(),
        [0, 1, 2]
    );

    assert_eq!(store.delete(&keys[1]).unwrap(), DeleteOutcome::Removed);
    assert_eq!(store.get(&keys[2]).unwrap(), b"ccc");

    // The duplicate behind the gap is still found...
    let duplicate = store.put(b"ccc").unwrap();
    assert!(!duplicate.stored_new);
    assert_eq!(duplicate.key, keys[2]);
    assert_eq!(store.references(&keys[2]).unwrap(), 2);

    // ...and a new collision fills the gap.
    let filler = store.put(b"dddd").unwrap();
    assert!(filler.stored_new);
    assert_eq!(filler.key.overflow, 1);

    // With the primary gone, later blocks are still found too.
    assert_eq!(store.delete(&keys[0]).unwrap(), DeleteOutcome::Removed);
    assert!(!store.put(b"dddd").unwrap().stored_new);
    assert!(!store.put(b"ccc").unwrap().stored_new);
    assert_eq!(store.references(&keys[2]).unwrap(), 3);
}

// ---------------------------------------------------------------- layout

#[test]
fn sig2location_follows_the_paper_example() {
    fn paper_signature(_body: &[u8]) -> Signature {
        Signature(0xADEE2232AF3A4355_0011223344556677)
    }
    let directory = tempfile::tempdir().unwrap();
    // The paper's example is a tree of depth 3.
    let config = StoreConfig {
        depth: 3,
        ..files_config()
    };
    let store = PageStore::open_with_signer(directory.path(), config, paper_signature).unwrap();
    let outcome = store.put(b"<html>paper</html>").unwrap();
    // 0x...77 mod 4 volumes = 3.
    assert_eq!(outcome.key.volume, 3);
    assert_eq!(
        outcome.key.to_string(),
        "adee2232af3a43550011223344556677-3"
    );
    let expected_path = directory
        .path()
        .join("vol-3")
        .join("ad")
        .join("ee")
        .join("2232af3a43550011223344556677");
    assert!(
        expected_path.is_file(),
        "{} missing",
        expected_path.display()
    );
    assert_eq!(block_files(&store), [expected_path]);

    let description: serde_json::Value = serde_json::from_slice(
        &fs::read(directory.path().join(STORE_DESCRIPTION_FILE_NAME)).unwrap(),
    )
    .unwrap();
    assert_eq!(
        description,
        serde_json::json!({"format_version": 1, "volumes": 4, "depth": 3})
    );
}

#[test]
fn block_file_is_readable_plain_text_header_then_data() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular);
    let body = b"<p>readable</p>\n".repeat(200);
    let key = store.put(&body).unwrap().key;
    store.put(&body).unwrap();
    let bytes = fs::read(block_path(&store, &key)).unwrap();
    let header = format!(
        "mirrorscope-block 1\noriginal-size: {}\ncompression: zstd\nreferences: 2\n\n",
        body.len()
    );
    assert!(bytes.starts_with(header.as_bytes()));
    let data = &bytes[header.len()..];
    assert_eq!(zstd::decode_all(data).unwrap(), body);

    let empty_key = store.put(b"").unwrap().key;
    assert_eq!(
        fs::read(block_path(&store, &empty_key)).unwrap(),
        b"mirrorscope-block 1\noriginal-size: 0\ncompression: none\nreferences: 1\n\n"
    );
    assert_eq!(store.get(&empty_key).unwrap(), b"");
}

#[test]
fn reopening_keeps_the_recorded_layout() {
    let directory = tempfile::tempdir().unwrap();
    let first_config = StoreConfig {
        volumes: 2,
        depth: 2,
        ..files_config()
    };
    let key = {
        let store = PageStore::open(directory.path(), first_config).unwrap();
        store.put(b"kept").unwrap().key
    };
    let store = PageStore::open(directory.path(), files_config()).unwrap();
    assert_eq!(
        store.layout(),
        StoreLayout {
            format_version: 1,
            volumes: 2,
            depth: 2
        }
    );
    assert_eq!(store.get(&key).unwrap(), b"kept");
    assert!(!directory.path().join("vol-2").exists());
}

#[test]
fn invalid_configuration_and_description_are_errors() {
    let directory = tempfile::tempdir().unwrap();
    let zero_volumes = StoreConfig {
        volumes: 0,
        ..files_config()
    };
    let error = PageStore::open(directory.path(), zero_volumes).unwrap_err();
    assert!(matches!(error, StoreError::InvalidConfig { .. }), "{error}");
    let too_deep = StoreConfig {
        depth: 17,
        ..files_config()
    };
    assert!(PageStore::open(directory.path(), too_deep).is_err());
    let bad_level = StoreConfig {
        zstd_level: 1000,
        ..files_config()
    };
    assert!(PageStore::open(directory.path(), bad_level).is_err());

    fs::write(
        directory.path().join(STORE_DESCRIPTION_FILE_NAME),
        b"{not json",
    )
    .unwrap();
    let error = PageStore::open(directory.path(), files_config()).unwrap_err();
    assert!(error.to_string().contains("store.json"), "{error}");
}

#[test]
fn keys_of_unknown_volumes_are_errors() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular);
    let key = ContentKey {
        signature: Signature(7),
        volume: 9,
        overflow: 0,
    };
    let error = store.get(&key).unwrap_err();
    assert!(matches!(error, StoreError::VolumeOutOfRange { .. }));
    assert!(
        error
            .to_string()
            .contains("00000000000000000000000000000007-9"),
        "{error}"
    );
}

// ---------------------------------------------------------------- keys and config text

#[test]
fn content_key_text_and_serde() {
    let primary = ContentKey {
        signature: Signature(0xADEE2232AF3A4355_0011223344556677),
        volume: 3,
        overflow: 0,
    };
    let overflow = ContentKey {
        overflow: 12,
        ..primary
    };
    assert_eq!(primary.to_string(), "adee2232af3a43550011223344556677-3");
    assert_eq!(
        overflow.to_string(),
        "adee2232af3a43550011223344556677-3-12"
    );
    assert_eq!(
        format!("{:x}", primary.signature),
        "adee2232af3a43550011223344556677"
    );
    for key in [primary, overflow] {
        assert_eq!(key.to_string().parse::<ContentKey>().unwrap(), key);
        let json = serde_json::to_string(&key).unwrap();
        assert_eq!(json, format!("\"{key}\""));
        assert_eq!(serde_json::from_str::<ContentKey>(&json).unwrap(), key);
    }
    assert_eq!(
        "ADEE2232AF3A43550011223344556677-3"
            .parse::<ContentKey>()
            .unwrap(),
        primary
    );
    for bad in [
        "",
        "adee2232af3a43550011223344556677",
        "adee2232af3a4355001122334455667-3",
        "+dee2232af3a43550011223344556677-3",
        "adee2232af3a43550011223344556677-03",
        "adee2232af3a43550011223344556677-65536",
        "adee2232af3a43550011223344556677-3-0",
        "adee2232af3a43550011223344556677-3-1-1",
        "adee2232af3a43550011223344556677--1",
    ] {
        let error = bad.parse::<ContentKey>().unwrap_err();
        assert!(error.to_string().contains(&format!("{bad:?}")), "{error}");
    }
    assert!(serde_json::from_str::<ContentKey>("\"nope\"").is_err());
}

#[test]
fn store_config_serde_uses_kebab_case_and_defaults() {
    let config: StoreConfig = serde_json::from_str(r#"{"mode": "force-new"}"#).unwrap();
    assert_eq!(
        config,
        StoreConfig {
            mode: StoreMode::ForceNew,
            ..StoreConfig::default()
        }
    );
    assert_eq!(
        serde_json::to_value(StoreConfig::default()).unwrap(),
        serde_json::json!({"volumes": 4, "depth": 2, "mode": "regular", "zstd_level": 3, "format": "packed"})
    );
    assert!(serde_json::from_str::<StoreConfig>(r#"{"mode": "compare", "colour": 1}"#).is_err());
}

#[test]
fn signature_of_is_xxh3_128() {
    assert_eq!(
        signature_of(b""),
        Signature(xxhash_rust::xxh3::xxh3_128(b""))
    );
    assert_ne!(signature_of(b"a"), signature_of(b"b"));
}

// ---------------------------------------------------------------- references

#[test]
fn duplicate_put_only_increments_and_delete_counts_down() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular);
    let body = b"<html><body>twice</body></html>";
    let first = store.put(body).unwrap();
    let files_after_first = files_under(directory.path());
    let second = store.put(body).unwrap();
    assert!(first.stored_new && !second.stored_new);
    assert_eq!(first.key, second.key);
    assert_eq!(files_under(directory.path()), files_after_first);
    assert_eq!(store.references(&first.key).unwrap(), 2);

    assert_eq!(store.add_reference(&first.key).unwrap(), 3);
    assert_eq!(store.references(&first.key).unwrap(), 3);
    assert_eq!(
        store.delete(&first.key).unwrap(),
        DeleteOutcome::Decremented { remaining: 2 }
    );
    assert_eq!(
        store.delete(&first.key).unwrap(),
        DeleteOutcome::Decremented { remaining: 1 }
    );
    assert_eq!(store.get(&first.key).unwrap(), body);
    assert_eq!(store.delete(&first.key).unwrap(), DeleteOutcome::Removed);
    assert!(block_files(&store).is_empty());

    let path = block_path(&store, &first.key);
    for error in [
        store.get(&first.key).unwrap_err(),
        store.references(&first.key).unwrap_err(),
        store.add_reference(&first.key).unwrap_err(),
        store.delete(&first.key).unwrap_err(),
    ] {
        assert!(error.is_not_found(), "{error}");
        assert!(
            error.to_string().contains(&first.key.to_string()),
            "{error}"
        );
        assert!(
            error.to_string().contains(&path.display().to_string()),
            "{error}"
        );
    }
}

#[test]
fn keys_never_stored_are_not_found_even_without_their_directory() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular);
    let key = ContentKey {
        signature: Signature(u128::MAX),
        volume: 1,
        overflow: 4,
    };
    assert!(store.get(&key).unwrap_err().is_not_found());
    assert!(store.add_reference(&key).unwrap_err().is_not_found());
    assert!(store.delete(&key).unwrap_err().is_not_found());
}

// ---------------------------------------------------------------- crashes

#[test]
fn reopening_removes_leftovers_of_interrupted_writes() {
    let directory = tempfile::tempdir().unwrap();
    let bodies: Vec<Vec<u8>> = (0..20)
        .map(|index| {
            format!("<p>page {index}</p>")
                .repeat(index + 1)
                .into_bytes()
        })
        .collect();
    let (keys, leaf_directory) = {
        let store = open_store(directory.path(), StoreMode::Regular);
        let keys: Vec<ContentKey> = bodies
            .iter()
            .map(|body| store.put(body).unwrap().key)
            .collect();
        let first_block = block_path(&store, &keys[0]);
        let leaf_directory = first_block.parent().unwrap().to_path_buf();
        let leaf_name = file_name_of(&first_block).to_owned();

        // A crash halfway through a reference-count rewrite, through the
        // real write path...
        failpoint::arm(WriteFailpoint::CrashHalfway);
        assert!(store.put(&bodies[0]).is_err());
        // ...and leftovers planted by hand: half a block and an empty file,
        // as a writer killed at different moments leaves them.
        let whole_block = fs::read(&first_block).unwrap();
        fs::write(
            leaf_directory.join(format!(".tmp-999999-0-{leaf_name}")),
            &whole_block[..whole_block.len() / 2],
        )
        .unwrap();
        fs::write(
            leaf_directory.join(format!(".tmp-999999-1-{leaf_name}.1")),
            b"",
        )
        .unwrap();
        fs::write(
            directory.path().join(".tmp-999999-2-store.json"),
            b"{\"form",
        )
        .unwrap();
        assert_eq!(temporary_files(&store).len(), 4);
        (keys, leaf_directory)
    };

    let store = open_store(directory.path(), StoreMode::Regular);
    assert!(temporary_files(&store).is_empty());
    assert!(leaf_directory.join(".lock").exists());
    for (key, body) in keys.iter().zip(&bodies) {
        assert_eq!(&store.get(key).unwrap(), body);
        assert_eq!(store.references(key).unwrap(), 1);
    }
    let outcome = store.put(&bodies[0]).unwrap();
    assert_eq!(outcome.key, keys[0]);
    assert_eq!(store.references(&keys[0]).unwrap(), 2);
    let new = store.put(b"<p>after the crash</p>").unwrap();
    assert!(new.stored_new);
    assert_eq!(store.get(&new.key).unwrap(), b"<p>after the crash</p>");
}

#[test]
fn a_write_that_fails_halfway_leaves_the_previous_block() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular);
    let body = b"<p>precious</p>".repeat(30);
    let key = store.put(&body).unwrap().key;
    let block_before = fs::read(block_path(&store, &key)).unwrap();

    // Failing reference-count changes: put of a duplicate, add_reference.
    failpoint::arm(WriteFailpoint::ErrorHalfway);
    let error = store.put(&body).unwrap_err();
    assert!(error.to_string().contains("injected failure"), "{error}");
    failpoint::arm(WriteFailpoint::ErrorHalfway);
    assert!(store.add_reference(&key).is_err());
    assert_eq!(store.references(&key).unwrap(), 1);
    assert_eq!(fs::read(block_path(&store, &key)).unwrap(), block_before);

    // A failing decrement.
    assert_eq!(store.add_reference(&key).unwrap(), 2);
    failpoint::arm(WriteFailpoint::ErrorHalfway);
    assert!(store.delete(&key).is_err());
    assert_eq!(store.references(&key).unwrap(), 2);
    assert_eq!(store.get(&key).unwrap(), body);

    // A failing new block: nothing is stored, then a retry works.
    failpoint::arm(WriteFailpoint::ErrorHalfway);
    assert!(store.put(b"<p>new page</p>").is_err());
    assert_eq!(block_files(&store).len(), 1);
    assert!(temporary_files(&store).is_empty());
    let retry = store.put(b"<p>new page</p>").unwrap();
    assert!(retry.stored_new);
    assert_eq!(store.references(&retry.key).unwrap(), 1);
}

// ---------------------------------------------------------------- concurrency

fn shared_body(index: usize) -> Vec<u8> {
    format!("<html><body>shared page {index}</body></html>")
        .repeat(index % 7 + 1)
        .into_bytes()
}

#[test]
fn concurrent_threads_count_exactly() {
    const THREADS: usize = 8;
    const SHARED: usize = 50;
    const DISTINCT_PER_THREAD: usize = 5;
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Compare);

    let keys_per_thread: Vec<Vec<ContentKey>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                let store = &store;
                scope.spawn(move || {
                    let mut keys = Vec::new();
                    // Each thread walks the shared bodies from a different start.
                    for step in 0..SHARED {
                        let index = (step + thread * 7) % SHARED;
                        keys.push((index, store.put(&shared_body(index)).unwrap().key));
                    }
                    for distinct in 0..DISTINCT_PER_THREAD {
                        let body = format!("thread {thread} own page {distinct}");
                        let outcome = store.put(body.as_bytes()).unwrap();
                        assert!(outcome.stored_new);
                    }
                    keys.sort();
                    keys.into_iter().map(|(_, key)| key).collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });

    for keys in &keys_per_thread[1..] {
        assert_eq!(keys, &keys_per_thread[0]);
    }
    for (index, key) in keys_per_thread[0].iter().enumerate() {
        assert_eq!(store.references(key).unwrap(), THREADS as u64);
        assert_eq!(store.get(key).unwrap(), shared_body(index));
    }
    let stats = store.stats().unwrap();
    assert_eq!(
        stats.blocks,
        (SHARED + THREADS * DISTINCT_PER_THREAD) as u64
    );
    assert_eq!(
        stats.references,
        (THREADS * (SHARED + DISTINCT_PER_THREAD)) as u64
    );
    assert!(temporary_files(&store).is_empty());
}

/// Environment variable that turns [`child_process_writer`] into a worker.
const CHILD_ROOT_VARIABLE: &str = "MIRRORSCOPE_STORE_TEST_CHILD_ROOT";
const CROSS_PROCESS_BODIES: usize = 30;

/// Does nothing in a normal test run. Started by
/// [`concurrent_processes_count_exactly`] with the store root in the
/// environment, it puts each shared body once.
#[test]
fn child_process_writer() {
    let Some(root) = std::env::var_os(CHILD_ROOT_VARIABLE) else {
        return;
    };
    let store = open_store(Path::new(&root), StoreMode::Regular);
    for index in 0..CROSS_PROCESS_BODIES {
        store.put(&shared_body(index)).unwrap();
    }
}

#[test]
fn concurrent_processes_count_exactly() {
    const CHILDREN: usize = 3;
    const PARENT_THREADS: usize = 2;
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular);
    let test_binary = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..CHILDREN)
        .map(|_| {
            Command::new(&test_binary)
                .args([
                    "--exact",
                    "store::tests::child_process_writer",
                    "--test-threads=1",
                    "--quiet",
                ])
                .env(CHILD_ROOT_VARIABLE, directory.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::scope(|scope| {
        for _ in 0..PARENT_THREADS {
            scope.spawn(|| {
                for index in (0..CROSS_PROCESS_BODIES).rev() {
                    store.put(&shared_body(index)).unwrap();
                }
            });
        }
    });
    for child in &mut children {
        assert!(child.wait().unwrap().success());
    }
    for index in 0..CROSS_PROCESS_BODIES {
        let outcome = store.put(&shared_body(index)).unwrap();
        assert!(!outcome.stored_new);
        assert_eq!(outcome.key.overflow, 0);
        assert_eq!(
            store.references(&outcome.key).unwrap(),
            (CHILDREN + PARENT_THREADS + 1) as u64
        );
    }
    assert_eq!(store.stats().unwrap().blocks, CROSS_PROCESS_BODIES as u64);
}

// ---------------------------------------------------------------- corruption

#[test]
fn corrupt_blocks_are_errors_naming_the_file() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular);
    let body = b"<p>will be damaged</p>".repeat(50);
    let key = store.put(&body).unwrap().key;
    let path = block_path(&store, &key);
    let intact = fs::read(&path).unwrap();

    // Truncated compressed data.
    fs::write(&path, &intact[..intact.len() - 5]).unwrap();
    let error = store.get(&key).unwrap_err();
    assert!(matches!(error, StoreError::CorruptBlock { .. }), "{error}");
    assert!(
        error.to_string().contains(&path.display().to_string()),
        "{error}"
    );

    // Data that decompresses to a different size than the header says.
    let header_end = intact.windows(2).position(|pair| pair == b"\n\n").unwrap() + 2;
    let mut wrong_size = format!(
        "mirrorscope-block 1\noriginal-size: {}\ncompression: zstd\nreferences: 1\n\n",
        body.len() + 1
    )
    .into_bytes();
    wrong_size.extend_from_slice(&intact[header_end..]);
    fs::write(&path, &wrong_size).unwrap();
    let error = store.get(&key).unwrap_err();
    assert!(error.to_string().contains("original-size"), "{error}");
    // ... and to more than it says.
    let mut too_long = format!(
        "mirrorscope-block 1\noriginal-size: {}\ncompression: zstd\nreferences: 1\n\n",
        body.len() - 1
    )
    .into_bytes();
    too_long.extend_from_slice(&intact[header_end..]);
    fs::write(&path, &too_long).unwrap();
    let error = store.get(&key).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("decompresses to more than original-size"),
        "{error}"
    );

    // A bad header.
    fs::write(&path, b"not a block\n\ngarbage").unwrap();
    for error in [
        store.get(&key).unwrap_err(),
        store.references(&key).unwrap_err(),
        store.add_reference(&key).unwrap_err(),
        store.delete(&key).unwrap_err(),
    ] {
        assert!(matches!(error, StoreError::CorruptBlock { .. }), "{error}");
        assert!(
            error.to_string().contains(&path.display().to_string()),
            "{error}"
        );
    }
    // No blank line at all, and an empty file.
    for damaged in [&b"mirrorscope-block 1\noriginal-size: 3"[..], b""] {
        fs::write(&path, damaged).unwrap();
        let error = store.get(&key).unwrap_err();
        assert!(matches!(error, StoreError::CorruptBlock { .. }), "{error}");
    }

    // The damaged block is counted, not summed, and never overwritten: the
    // body goes to an overflow block.
    fs::write(&path, b"not a block\n\ngarbage").unwrap();
    assert_eq!(store.stats().unwrap().corrupt_blocks, 1);
    let outcome = store.put(&body).unwrap();
    assert!(outcome.stored_new);
    assert_eq!(outcome.key.overflow, 1);
    assert_eq!(store.get(&outcome.key).unwrap(), body);
    assert_eq!(fs::read(&path).unwrap(), b"not a block\n\ngarbage");
}

#[test]
fn deferred_directory_syncs_wait_for_flush_and_lose_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let store = PageStore::open(directory.path(), files_config())
        .unwrap()
        .defer_directory_syncs();
    let first = store.put(b"<p>one</p>").unwrap();
    let second = store.put(b"<p>two</p>").unwrap();
    store.put(b"<p>one</p>").unwrap();
    // New blocks, their folders and a reference-count rewrite are waiting.
    assert!(store.flush().unwrap() >= 2);
    assert_eq!(store.flush().unwrap(), 0);
    assert_eq!(store.references(&first.key).unwrap(), 2);
    assert_eq!(store.delete(&second.key).unwrap(), DeleteOutcome::Removed);
    assert_eq!(store.flush().unwrap(), 1);
    // A handle that syncs at once has nothing to flush.
    let immediate = PageStore::open(directory.path(), files_config()).unwrap();
    immediate.put(b"<p>three</p>").unwrap();
    assert_eq!(immediate.flush().unwrap(), 0);
    assert_eq!(immediate.get(&first.key).unwrap(), b"<p>one</p>");
}

// ---------------------------------------------------------------- staged writes

/// The relative path and bytes of every file of a store but its lock files.
fn store_files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_under(root)
        .into_iter()
        .filter(|path| file_name_of(path) != super::location::LOCK_FILE_NAME)
        .map(|path| {
            let bytes = fs::read(&path).unwrap();
            (path.strip_prefix(root).unwrap().to_path_buf(), bytes)
        })
        .collect()
}

#[test]
fn staged_puts_decide_as_direct_puts_and_are_written_at_flush() {
    // Every body collides, so overflow indices, same-size fake duplicates
    // (regular) and byte comparisons (compare) all come into play, against
    // blocks on disk and blocks staged in the same batch.
    let bodies: Vec<&[u8]> = vec![
        b"<p>one</p>",
        b"<p>two</p>",
        b"<p>one</p>",
        b"<p>six</p>",
        b"<p>a longer page</p>",
        b"<p>two</p>",
        b"",
        b"<p>one</p>",
    ];
    for mode in [StoreMode::Regular, StoreMode::Compare, StoreMode::ForceNew] {
        let direct_dir = tempfile::tempdir().unwrap();
        let staged_dir = tempfile::tempdir().unwrap();
        let direct = open_colliding_store(direct_dir.path(), mode);
        // Some blocks are on disk before the batch.
        for body in &bodies[..2] {
            direct.put(body).unwrap();
            open_colliding_store(staged_dir.path(), mode)
                .put(body)
                .unwrap();
        }
        let staged = open_colliding_store(staged_dir.path(), mode).stage_writes();
        let before = store_files(staged_dir.path());
        for body in &bodies[2..] {
            let expected = direct.put(body).unwrap();
            let outcome = staged.put(body).unwrap();
            assert_eq!(
                outcome,
                expected,
                "{mode:?} {:?}",
                String::from_utf8_lossy(body)
            );
        }
        assert_eq!(
            store_files(staged_dir.path()),
            before,
            "{mode:?}: nothing is written before the flush"
        );
        staged.flush().unwrap();
        assert_eq!(
            store_files(staged_dir.path()),
            store_files(direct_dir.path()),
            "{mode:?}: the same blocks, byte for byte"
        );
        assert!(temporary_files(&staged).is_empty());
    }
}

#[test]
fn staged_puts_of_many_threads_count_exactly() {
    const THREADS: usize = 4;
    const SHARED: usize = 40;
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular).stage_writes();
    // Half the shared bodies are on disk before the batch.
    let direct = open_store(directory.path(), StoreMode::Regular);
    for index in 0..SHARED / 2 {
        direct.put(&shared_body(index)).unwrap();
    }
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let store = &store;
            scope.spawn(move || {
                for step in 0..SHARED {
                    let index = (step + thread * 11) % SHARED;
                    store.put(&shared_body(index)).unwrap();
                }
            });
        }
    });
    store.flush().unwrap();
    let stats = store.stats().unwrap();
    assert_eq!(stats.blocks, SHARED as u64);
    assert_eq!(stats.references, (THREADS * SHARED + SHARED / 2) as u64);
    for index in 0..SHARED {
        let key = direct.put(&shared_body(index)).unwrap().key;
        let extra = u64::from(index < SHARED / 2);
        assert_eq!(direct.references(&key).unwrap(), THREADS as u64 + extra + 1);
    }
    assert!(temporary_files(&store).is_empty());
}

#[test]
fn a_staged_put_never_flushed_is_never_written() {
    let directory = tempfile::tempdir().unwrap();
    {
        let store = open_store(directory.path(), StoreMode::Regular).stage_writes();
        store.put(b"<p>dropped</p>").unwrap();
    }
    let store = open_store(directory.path(), StoreMode::Regular);
    assert!(
        block_files(&store).is_empty(),
        "an unflushed put is not written"
    );
    assert!(temporary_files(&store).is_empty());
}

#[test]
fn every_other_operation_of_a_staging_handle_writes_the_batch_first() {
    let body: &[u8] = b"<p>kept</p>";
    let directory = tempfile::tempdir().unwrap();
    let direct = open_store(directory.path(), StoreMode::Regular);
    let key = direct.put(body).unwrap().key;
    // Each operation, alone after a staged put of the same body, sees it.
    let staged = || {
        let store = direct.clone().stage_writes();
        assert_eq!(store.put(body).unwrap().key, key);
        store
    };
    assert_eq!(staged().references(&key).unwrap(), 2);
    assert_eq!(staged().get(&key).unwrap(), body);
    assert_eq!(staged().stats().unwrap().references, 4);
    assert_eq!(staged().add_reference(&key).unwrap(), 6);
    assert_eq!(
        staged().delete(&key).unwrap(),
        DeleteOutcome::Decremented { remaining: 6 }
    );
    assert_eq!(direct.references(&key).unwrap(), 6);
}

#[test]
fn a_failed_flush_loses_the_batch_and_the_handle_refuses_to_go_on() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular).stage_writes();
    store.put(b"<p>one</p>").unwrap();
    store.put(b"<p>two</p>").unwrap();
    failpoint::arm(WriteFailpoint::ErrorHalfway);
    let error = store.flush().unwrap_err();
    assert!(error.to_string().contains("injected failure"), "{error}");
    assert!(
        block_files(&store).is_empty(),
        "nothing of the batch is renamed"
    );
    assert!(
        temporary_files(&store).is_empty(),
        "no temporary file is left"
    );
    // Nothing staged before the failure may be journaled by anyone: every
    // later put and flush of the handle fails, naming the store.
    for error in [
        store.put(b"<p>three</p>").unwrap_err(),
        store.flush().unwrap_err(),
    ] {
        assert!(
            matches!(error, StoreError::StagedWritesLost { .. }),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains(&directory.path().display().to_string()),
            "{error}"
        );
    }
    // A new handle works.
    let again = open_store(directory.path(), StoreMode::Regular).stage_writes();
    let key = again.put(b"<p>one</p>").unwrap().key;
    again.flush().unwrap();
    assert_eq!(again.references(&key).unwrap(), 1);
}

#[test]
fn flushes_and_reads_alongside_staged_puts_lose_no_count() {
    const THREADS: usize = 3;
    const SHARED: usize = 30;
    let directory = tempfile::tempdir().unwrap();
    let store = open_store(directory.path(), StoreMode::Regular).stage_writes();
    let first = store.put(&shared_body(0)).unwrap().key;
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let store = &store;
            scope.spawn(move || {
                for step in 0..SHARED {
                    store
                        .put(&shared_body((step + thread * 7) % SHARED))
                        .unwrap();
                }
            });
        }
        let store = &store;
        scope.spawn(move || {
            // Reads never see fewer references than were put before them.
            let mut seen = 0;
            for _ in 0..20 {
                let now = store.references(&first).unwrap();
                assert!(now >= seen.max(1));
                seen = now;
                store.flush().unwrap();
            }
        });
    });
    store.flush().unwrap();
    let stats = store.stats().unwrap();
    assert_eq!(stats.blocks, SHARED as u64);
    assert_eq!(stats.references, (THREADS * SHARED + 1) as u64);
    assert_eq!(store.references(&first).unwrap(), THREADS as u64 + 1);
    assert!(temporary_files(&store).is_empty());
}

#[test]
fn a_staging_handle_keeps_its_listings_through_flushes_and_removals() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding_store(directory.path(), StoreMode::Regular).stage_writes();
    let one = store.put(b"<p>one</p>").unwrap();
    store.flush().unwrap();
    // Listed before the flush wrote it: the flush must add it.
    let again = store.put(b"<p>one</p>").unwrap();
    assert_eq!((again.key, again.stored_new), (one.key, false));
    let two = store.put(b"<p>second</p>").unwrap();
    assert_eq!(two.key.overflow, 1);
    store.flush().unwrap();
    assert_eq!(store.references(&one.key).unwrap(), 2);
    // Removing the primary block leaves a gap before the overflow block.
    store.delete(&one.key).unwrap();
    assert_eq!(store.delete(&one.key).unwrap(), DeleteOutcome::Removed);
    let three = store.put(b"<p>third page</p>").unwrap();
    assert_eq!((three.key.overflow, three.stored_new), (0, true));
    assert_eq!(store.put(b"<p>second</p>").unwrap().key, two.key);
    store.flush().unwrap();
    assert_eq!(store.references(&two.key).unwrap(), 2);
    assert_eq!(store.get(&three.key).unwrap(), b"<p>third page</p>");
    assert_eq!(block_files(&store).len(), 2);
}
