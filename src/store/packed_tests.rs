//! Tests of the packed layout (format 2): the store's contract (round trips,
//! modes under collisions, staging, threads and processes, corruption) and
//! what is its own (records in packs, crashed appends, the upgrade from the
//! file layout, compaction).

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;

use super::packed::{self, parse_pack_file_name};
use super::*;

fn open_packed(root: &Path, mode: StoreMode) -> PageStore {
    let config = StoreConfig {
        mode,
        ..StoreConfig::default()
    };
    PageStore::open(root, config).expect("open store")
}

fn constant_signature(_body: &[u8]) -> Signature {
    Signature(0)
}

fn open_colliding(root: &Path, mode: StoreMode) -> PageStore {
    let config = StoreConfig {
        mode,
        ..StoreConfig::default()
    };
    PageStore::open_with_signer(root, config, constant_signature).expect("open store")
}

/// Every pack file of the store, in path order.
fn pack_files(root: &Path) -> Vec<PathBuf> {
    let mut packs = Vec::new();
    for volume in fs::read_dir(root).unwrap().flatten() {
        if !volume.file_name().to_string_lossy().starts_with("vol-") {
            continue;
        }
        for entry in fs::read_dir(volume.path()).unwrap().flatten() {
            if parse_pack_file_name(&entry.file_name().to_string_lossy()).is_some() {
                packs.push(entry.path());
            }
        }
    }
    packs.sort();
    packs
}

/// Every file under `root` but the index's and the lock files.
fn block_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in fs::read_dir(&directory).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                if name != packed::INDEX_DIRECTORY {
                    pending.push(entry.path());
                }
            } else if directory != root && name != ".lock" && parse_pack_file_name(&name).is_none()
            {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

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
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_counts_and_full_deletion(
        bodies in prop::collection::vec(body_strategy(), 0..14),
        compare in any::<bool>(),
        staged in any::<bool>(),
    ) {
        let directory = tempfile::tempdir().unwrap();
        let mode = if compare { StoreMode::Compare } else { StoreMode::Regular };
        let mut store = open_packed(directory.path(), mode);
        if staged {
            store = store.stage_writes();
        }
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
        store.flush().unwrap();
        for (body, (key, count)) in &expected {
            prop_assert_eq!(&store.get(key).unwrap(), body);
            prop_assert_eq!(store.references(key).unwrap(), *count);
            prop_assert_eq!(store.verify(key).unwrap(), None);
        }
        let stats = store.stats().unwrap();
        prop_assert_eq!(stats.blocks, expected.len() as u64);
        prop_assert_eq!(stats.references, bodies.len() as u64);
        prop_assert_eq!(stats.original_bytes, expected.keys().map(|body| body.len() as u64).sum::<u64>());
        prop_assert_eq!(stats.referenced_bytes, bodies.iter().map(|body| body.len() as u64).sum::<u64>());
        // Every block once in the packs, headers included.
        let packed_bytes: u64 = pack_files(directory.path()).iter().map(|path| fs::metadata(path).unwrap().len()).sum();
        prop_assert_eq!(stats.stored_bytes, packed_bytes);

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
        prop_assert_eq!(store.stats().unwrap().blocks, 0);
    }
}

#[test]
fn a_new_store_is_packed_and_records_are_plain_text_headers_then_data() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_packed(directory.path(), StoreMode::Regular);
    assert!(store.layout().is_packed());
    let description = fs::read_to_string(directory.path().join("store.json")).unwrap();
    assert!(
        description.contains("\"format_version\": 2"),
        "{description}"
    );

    let body = b"<html><p>packed</p></html>".repeat(40);
    let first = store.put(&body).unwrap();
    let second = store.put(b"tiny").unwrap();
    let packs = pack_files(directory.path());
    let bytes: Vec<u8> = packs
        .iter()
        .flat_map(|path| fs::read(path).unwrap())
        .collect();
    let text = String::from_utf8_lossy(&bytes);
    let expected_header = format!(
        "mirrorscope-packed-block 1\nkey: {}\noriginal-size: {}\ncompression: zstd\ndata-size: ",
        first.key,
        body.len()
    );
    assert!(text.contains(&expected_header), "{text}");
    // A body zstd would not shrink is stored as is, readable in the pack.
    assert!(text.contains(&format!(
        "key: {}\noriginal-size: 4\ncompression: none\ndata-size: 4\n\ntiny",
        second.key
    )));
    // The data decompresses with zstd alone.
    let header_at = bytes
        .windows(expected_header.len())
        .position(|window| window == expected_header.as_bytes())
        .unwrap();
    let data_at = header_at
        + bytes[header_at..]
            .windows(2)
            .position(|pair| pair == b"\n\n")
            .unwrap()
        + 2;
    let data = &bytes[data_at..data_at + (first.stored_size as usize - (data_at - header_at))];
    assert_eq!(zstd::decode_all(data).unwrap(), body);

    // A new reference writes nothing to the packs.
    let sizes: Vec<u64> = packs
        .iter()
        .map(|path| fs::metadata(path).unwrap().len())
        .collect();
    assert!(!store.put(&body).unwrap().stored_new);
    let after: Vec<u64> = packs
        .iter()
        .map(|path| fs::metadata(path).unwrap().len())
        .collect();
    assert_eq!(sizes, after);
    assert_eq!(store.references(&first.key).unwrap(), 2);
}

#[test]
fn modes_under_forced_collisions_follow_the_paper() {
    // force-new: a new block every time, at the next overflow index.
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding(directory.path(), StoreMode::ForceNew);
    let keys: Vec<ContentKey> = (0..3).map(|_| store.put(b"same").unwrap().key).collect();
    assert_eq!(
        keys.iter().map(|key| key.overflow).collect::<Vec<_>>(),
        [0, 1, 2]
    );

    // regular: a different size is a collision (an overflow block); the
    // same size is taken as a duplicate even when the bytes differ.
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding(directory.path(), StoreMode::Regular);
    let first = store.put(b"aaaa").unwrap();
    let longer = store.put(b"bbbbbb").unwrap();
    let fake = store.put(b"cccc").unwrap();
    assert_eq!((first.key.overflow, longer.key.overflow), (0, 1));
    assert!(!fake.stored_new);
    assert_eq!(fake.key, first.key);
    assert_eq!(store.get(&fake.key).unwrap(), b"aaaa");
    assert_eq!(store.references(&first.key).unwrap(), 2);

    // compare: same size, different bytes: two blocks.
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding(directory.path(), StoreMode::Compare);
    let first = store.put(b"aaaa").unwrap();
    let other = store.put(b"cccc").unwrap();
    let again = store.put(b"cccc").unwrap();
    assert!(other.stored_new);
    assert_eq!(other.key.overflow, 1);
    assert_eq!(again.key, other.key);
    assert_eq!(store.get(&first.key).unwrap(), b"aaaa");
    assert_eq!(store.get(&other.key).unwrap(), b"cccc");
}

#[test]
fn lookups_scan_past_a_deleted_overflow_block_and_reuse_its_index() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_colliding(directory.path(), StoreMode::Regular);
    let one = store.put(b"1").unwrap().key;
    let two = store.put(b"22").unwrap().key;
    let three = store.put(b"333").unwrap().key;
    assert_eq!(store.delete(&two).unwrap(), DeleteOutcome::Removed);
    let again = store.put(b"333").unwrap();
    assert_eq!(again.key, three);
    assert_eq!(store.references(&three).unwrap(), 2);
    let four = store.put(b"4444").unwrap().key;
    assert_eq!(four.overflow, 1, "the lowest free index");
    assert_eq!(store.get(&one).unwrap(), b"1");
    assert_eq!(store.get(&four).unwrap(), b"4444");
}

#[test]
fn keys_never_stored_or_of_unknown_volumes_are_errors() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_packed(directory.path(), StoreMode::Regular);
    let key = store.put(b"present").unwrap().key;
    let absent = ContentKey {
        signature: signature_of(b"absent"),
        volume: (signature_of(b"absent").0 % 4) as u16,
        overflow: 0,
    };
    assert!(store.get(&absent).unwrap_err().is_not_found());
    assert!(store.delete(&absent).unwrap_err().is_not_found());
    let wrong_volume = ContentKey {
        volume: (key.volume + 1) % 4,
        ..key
    };
    assert!(store.get(&wrong_volume).unwrap_err().is_not_found());
    let beyond = ContentKey { volume: 9, ..key };
    assert!(matches!(
        store.get(&beyond).unwrap_err(),
        StoreError::VolumeOutOfRange { .. }
    ));
}

#[test]
fn bytes_a_crashed_write_left_are_cut_and_never_read() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    let body = b"<p>kept</p>".repeat(30);
    let key = {
        let store = open_packed(root, StoreMode::Regular);
        let key = store.put(&body).unwrap().key;
        // A write that failed before its commit changes nothing.
        packed::failpoint::arm();
        assert!(store.put(b"lost to the failure").is_err());
        assert!(store.put(b"lost to the failure").unwrap().stored_new);
        key
    };
    let pack = pack_files(root)[0].clone();
    let committed = fs::metadata(&pack).unwrap().len();
    // What a process killed between its append and its commit leaves: bytes
    // past the committed length, and a pack the index never heard of.
    let mut torn = fs::read(&pack).unwrap();
    torn.extend_from_slice(b"mirrorscope-packed-block 1\nkey: half a rec");
    fs::write(&pack, &torn).unwrap();
    let orphan = pack.with_file_name("pack-00000777");
    fs::write(&orphan, b"never committed").unwrap();

    let reader = PageStore::open_for_reading(root, StoreConfig::default()).unwrap();
    assert_eq!(reader.get(&key).unwrap(), body);
    drop(reader);

    let store = open_packed(root, StoreMode::Regular);
    assert_eq!(fs::metadata(&pack).unwrap().len(), committed);
    assert!(!orphan.exists());
    assert_eq!(store.get(&key).unwrap(), body);
    let next = store.put(b"after the crash").unwrap();
    assert_eq!(store.get(&next.key).unwrap(), b"after the crash");
    assert_eq!(store.stats().unwrap().blocks, 3);
}

#[test]
fn staged_puts_decide_as_direct_puts_and_are_seen_only_after_the_flush() {
    let bodies: Vec<Vec<u8>> = (0..40)
        .map(|index| {
            format!("<p>page {}</p>", index % 13)
                .repeat(index % 5 + 1)
                .into_bytes()
        })
        .collect();
    let direct_root = tempfile::tempdir().unwrap();
    let direct = open_colliding(direct_root.path(), StoreMode::Compare);
    let staged_root = tempfile::tempdir().unwrap();
    let staged = open_colliding(staged_root.path(), StoreMode::Compare).stage_writes();
    let reader = PageStore::open_for_reading(staged_root.path(), StoreConfig::default()).unwrap();
    let mut keys = Vec::new();
    for body in &bodies {
        let one = direct.put(body).unwrap();
        let other = staged.put(body).unwrap();
        assert_eq!(
            (one.key, one.stored_new, one.original_size, one.stored_size),
            (
                other.key,
                other.stored_new,
                other.original_size,
                other.stored_size
            )
        );
        keys.push(one.key);
    }
    assert!(pack_files(staged_root.path()).is_empty());
    assert!(reader.get(&keys[0]).unwrap_err().is_not_found());
    assert!(staged.flush().unwrap() > 0);
    for (body, key) in bodies.iter().zip(&keys) {
        assert_eq!(&reader.get(key).unwrap(), body);
        assert_eq!(
            reader.references(key).unwrap(),
            direct.references(key).unwrap()
        );
    }
    // Further puts of committed bodies are counted at the next flush.
    staged.put(&bodies[0]).unwrap();
    staged.flush().unwrap();
    assert_eq!(
        reader.references(&keys[0]).unwrap(),
        direct.references(&keys[0]).unwrap() + 1
    );
    assert_eq!(staged.stats().unwrap(), {
        let mut stats = direct.stats().unwrap();
        stats.references += 1;
        stats.referenced_bytes += bodies[0].len() as u64;
        stats
    });
}

#[test]
fn staged_puts_of_many_threads_count_exactly() {
    const THREADS: u64 = 4;
    let directory = tempfile::tempdir().unwrap();
    let store = open_packed(directory.path(), StoreMode::Regular).stage_writes();
    let bodies: Vec<Vec<u8>> = (0..60)
        .map(|index| format!("<p>shared {index}</p>").into_bytes())
        .collect();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (store, bodies) = (&store, &bodies);
            scope.spawn(move || {
                for (index, body) in bodies.iter().enumerate() {
                    store.put(body).unwrap();
                    if index % 17 == thread as usize {
                        store.flush().unwrap();
                    }
                }
            });
        }
    });
    store.flush().unwrap();
    for body in &bodies {
        let key = ContentKey {
            signature: signature_of(body),
            volume: (signature_of(body).0 % 4) as u16,
            overflow: 0,
        };
        assert_eq!(store.references(&key).unwrap(), THREADS);
    }
    assert_eq!(store.stats().unwrap().blocks, bodies.len() as u64);
}

#[test]
fn a_failed_flush_loses_the_batch_and_the_handle_refuses_to_go_on() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_packed(directory.path(), StoreMode::Regular).stage_writes();
    let kept = store.put(b"flushed first").unwrap().key;
    store.flush().unwrap();
    let lost = store.put(b"staged, then lost").unwrap().key;
    store.put(b"flushed first").unwrap();
    packed::failpoint::arm();
    assert!(matches!(
        store.flush().unwrap_err(),
        StoreError::StagedWritesLost { .. }
    ));
    assert!(store.put(b"anything").is_err());
    drop(store);
    let store = open_packed(directory.path(), StoreMode::Regular);
    assert!(store.get(&lost).unwrap_err().is_not_found());
    assert_eq!(store.references(&kept).unwrap(), 1);
}

fn shared_body(index: usize) -> Vec<u8> {
    format!("<html><p>body {index} shared by every writer</p></html>").into_bytes()
}

const CHILD_ROOT_VARIABLE: &str = "MIRRORSCOPE_PACKED_TEST_CHILD_ROOT";
const CROSS_PROCESS_BODIES: usize = 30;

/// Does nothing in a normal run; started by
/// [`concurrent_processes_count_exactly`] with a store root, puts each
/// shared body once.
#[test]
fn child_process_writer() {
    let Some(root) = std::env::var_os(CHILD_ROOT_VARIABLE) else {
        return;
    };
    let store = open_packed(Path::new(&root), StoreMode::Regular);
    for index in 0..CROSS_PROCESS_BODIES {
        store.put(&shared_body(index)).unwrap();
    }
}

#[test]
fn concurrent_processes_count_exactly() {
    const CHILDREN: usize = 3;
    let directory = tempfile::tempdir().unwrap();
    let store = open_packed(directory.path(), StoreMode::Regular);
    let test_binary = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..CHILDREN)
        .map(|_| {
            Command::new(&test_binary)
                .args([
                    "--exact",
                    "store::packed_tests::child_process_writer",
                    "--test-threads=1",
                    "--quiet",
                ])
                .env(CHILD_ROOT_VARIABLE, directory.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for index in (0..CROSS_PROCESS_BODIES).rev() {
        store.put(&shared_body(index)).unwrap();
    }
    for child in &mut children {
        assert!(child.wait().unwrap().success());
    }
    for index in 0..CROSS_PROCESS_BODIES {
        let outcome = store.put(&shared_body(index)).unwrap();
        assert!(!outcome.stored_new);
        assert_eq!(outcome.key.overflow, 0);
        assert_eq!(
            store.references(&outcome.key).unwrap(),
            (CHILDREN + 2) as u64
        );
    }
    assert_eq!(store.stats().unwrap().blocks, CROSS_PROCESS_BODIES as u64);
}

#[test]
fn a_damaged_record_is_an_error_naming_its_pack() {
    let directory = tempfile::tempdir().unwrap();
    let store = open_packed(directory.path(), StoreMode::Regular);
    let body = b"<p>will be damaged</p>".repeat(50);
    let key = store.put(&body).unwrap().key;
    let pack = pack_files(directory.path())[0].clone();
    let mut bytes = fs::read(&pack).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0xff;
    fs::write(&pack, &bytes).unwrap();
    let error = store.get(&key).unwrap_err();
    assert!(
        matches!(&error, StoreError::CorruptBlock { path, .. } if *path == pack),
        "{error}"
    );
    assert!(store.verify(&key).unwrap().is_some());

    // A header that names another key is caught too.
    let text = String::from_utf8_lossy(&bytes).replace(&key.to_string(), &"0".repeat(34));
    fs::write(&pack, text.as_bytes()).unwrap();
    let error = PageStore::open_for_reading(directory.path(), StoreConfig::default())
        .unwrap()
        .get(&key)
        .unwrap_err();
    assert!(error.to_string().contains("is not block"), "{error}");
}

/// A store in the file layout, with `bodies` put (some twice), one
/// colliding overflow block, and one block damaged on disk.
fn file_layout_store(root: &Path) -> (Vec<(ContentKey, Vec<u8>, u64)>, PathBuf) {
    let config = StoreConfig {
        format: StoreFormat::Files,
        ..StoreConfig::default()
    };
    let store = PageStore::open(root, config).unwrap();
    let mut kept = Vec::new();
    for index in 0..25 {
        let body = format!("<p>page {index}</p>")
            .repeat(index + 1)
            .into_bytes();
        let key = store.put(&body).unwrap().key;
        let mut references = 1;
        if index % 3 == 0 {
            store.put(&body).unwrap();
            references += 1;
        }
        kept.push((key, body, references));
    }
    let damaged = store.put(b"<p>damaged on disk</p>").unwrap().key;
    let damaged_path = store
        .walk()
        .unwrap()
        .blocks
        .into_iter()
        .find(|block| block.key == damaged)
        .unwrap()
        .path;
    let mut bytes = fs::read(&damaged_path).unwrap();
    bytes[0] = b'x';
    fs::write(&damaged_path, bytes).unwrap();
    (kept, damaged_path)
}

#[test]
fn opening_a_file_layout_store_for_writing_upgrades_it_keeping_keys_and_counts() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    let (kept, damaged) = file_layout_store(root);
    let files_reader = PageStore::open_for_reading(root, StoreConfig::default()).unwrap();
    assert!(!files_reader.layout().is_packed());

    let store = open_packed(root, StoreMode::Regular);
    assert!(store.layout().is_packed());
    for (key, body, references) in &kept {
        assert_eq!(&store.get(key).unwrap(), body);
        assert_eq!(store.references(key).unwrap(), *references);
        // A reader opened before the upgrade finds the packs.
        assert_eq!(&files_reader.get(key).unwrap(), body);
    }
    // Only the unreadable block is left, for a person to look at.
    assert_eq!(block_files(root), vec![damaged]);
    assert_eq!(store.stats().unwrap().blocks, kept.len() as u64);
    // New bodies after the upgrade, and old ones counted again.
    assert!(!store.put(&kept[0].1).unwrap().stored_new);
    assert_eq!(store.references(&kept[0].0).unwrap(), kept[0].2 + 1);
}

#[test]
fn an_interrupted_upgrade_is_finished_by_the_next_open() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    let (kept, _) = file_layout_store(root);
    let saved: Vec<(PathBuf, Vec<u8>)> = block_files(root)
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    let description = fs::read(root.join("store.json")).unwrap();
    drop(open_packed(root, StoreMode::Regular));

    // Killed after the packs were committed, before store.json changed:
    // the file layout as it was, and packs already holding its blocks.
    for (path, bytes) in &saved {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }
    fs::write(root.join("store.json"), &description).unwrap();
    let store = open_packed(root, StoreMode::Regular);
    for (key, body, references) in &kept {
        assert_eq!(&store.get(key).unwrap(), body);
        assert_eq!(
            store.references(key).unwrap(),
            *references,
            "not counted twice"
        );
    }
    drop(store);

    // Killed after store.json changed, before the block files went.
    for (path, bytes) in &saved {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }
    let store = open_packed(root, StoreMode::Regular);
    assert_eq!(block_files(root).len(), 1, "only the damaged block stays");
    assert_eq!(store.stats().unwrap().blocks, kept.len() as u64);
}

#[test]
fn a_files_configuration_keeps_the_file_layout() {
    let directory = tempfile::tempdir().unwrap();
    let (kept, _) = file_layout_store(directory.path());
    let config = StoreConfig {
        format: StoreFormat::Files,
        ..StoreConfig::default()
    };
    let store = PageStore::open(directory.path(), config).unwrap();
    assert!(!store.layout().is_packed());
    assert!(pack_files(directory.path()).is_empty());
    assert_eq!(store.get(&kept[1].0).unwrap(), kept[1].1);
}

#[test]
fn full_packs_roll_over_and_compaction_reclaims_removed_blocks() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    let config = StoreConfig {
        volumes: 1,
        ..StoreConfig::default()
    };
    let store = PageStore::open(root, config).unwrap().with_pack_bytes(4096);
    // Bodies zstd cannot shrink, about 1 KB each: four to a pack.
    let bodies: Vec<Vec<u8>> = (0..12u32)
        .map(|index| {
            let mut state = u64::from(index) + 1;
            (0..1000)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    (state >> 56) as u8
                })
                .collect()
        })
        .collect();
    let keys: Vec<ContentKey> = bodies
        .iter()
        .map(|body| store.put(body).unwrap().key)
        .collect();
    let packs = pack_files(root);
    assert!(packs.len() >= 3, "{packs:?}");
    let first_pack_bytes = fs::metadata(&packs[0]).unwrap().len();
    assert!(first_pack_bytes <= 4096);

    // Nothing half dead yet: compaction leaves everything.
    assert_eq!(store.compact().unwrap(), 0);
    // Remove two of the first pack's three blocks.
    for key in &keys[..2] {
        assert_eq!(store.delete(key).unwrap(), DeleteOutcome::Removed);
    }
    let before = store.stats().unwrap();
    let reclaimed = store.compact().unwrap();
    assert!(reclaimed > 2000, "{reclaimed}");
    assert!(!packs[0].exists(), "the first pack is gone");
    assert_eq!(store.stats().unwrap(), before);
    for (key, body) in keys.iter().zip(&bodies).skip(2) {
        assert_eq!(&store.get(key).unwrap(), body);
        assert_eq!(store.verify(key).unwrap(), None);
    }
    // A reopened store reads the moved block.
    drop(store);
    let store = open_packed(root, StoreMode::Regular);
    assert_eq!(store.get(&keys[2]).unwrap(), bodies[2]);
}
