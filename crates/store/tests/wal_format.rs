//! The log's bytes: round trips, torn tails, corruption, repair, and
//! decoding that never panics.
mod wal_common;

use plexus_graph::ExternalId;
use plexus_store::fault::FaultyFs;
use plexus_store::wal::{self, codec, decode_payload, encode_frame, inspect_bytes, Record, Wal};
use plexus_store::{Op, StoreError};
use proptest::prelude::*;
use std::path::Path;
use std::sync::Arc;
use wal_common::record;

/// A log image of `versions` and the byte offset where each frame starts.
fn image(versions: impl IntoIterator<Item = u64>) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = codec::file_header().to_vec();
    let mut starts = Vec::new();
    for v in versions {
        starts.push(bytes.len());
        encode_frame(&record(v), &mut bytes).expect("encodes");
    }
    (bytes, starts)
}

fn open_bytes(bytes: &[u8]) -> (FaultyFs, plexus_store::Result<(Wal, wal::Recovery)>) {
    let fs = FaultyFs::new();
    fs.put(Path::new("log"), bytes);
    let res = Wal::open("log", Arc::new(fs.clone()));
    (fs, res)
}

#[test]
fn records_round_trip_through_a_real_file_and_reopen_identically() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("graph.log");
    let (wal, rec) = Wal::open_real(&path).expect("creates");
    assert!(rec.records.is_empty() && rec.torn.is_none());
    assert_eq!(rec.end, codec::HEADER_LEN);
    for v in 1..=50 {
        wal.append(&record(v)).expect("appends");
    }
    assert_eq!(wal.record_count(), 50);
    assert_eq!(wal.last_version(), Some(50));
    let len = std::fs::metadata(&path).expect("stat").len();
    assert_eq!(wal.size_bytes(), len);
    drop(wal);
    let (wal, rec) = Wal::open_real(&path).expect("reopens");
    assert_eq!(rec.records, (1..=50).map(record).collect::<Vec<_>>());
    assert_eq!((rec.end, rec.torn), (len, None));
    wal.append(&record(51)).expect("appends after reopening");
    let report = wal::inspect(&path).expect("inspects");
    assert_eq!(
        (report.records, report.first_version, report.last_version),
        (51, Some(1), Some(51))
    );
    assert!(report.torn.is_none() && report.corrupt.is_none());
}

#[test]
fn a_torn_last_frame_of_every_length_is_dropped_and_the_log_cut_there() {
    let (full, starts) = image(1..=6);
    let last = *starts.last().expect("frames");
    for cut in last..full.len() {
        let (fs, res) = open_bytes(&full[..cut]);
        let (wal, rec) = res.unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert_eq!(
            rec.records,
            (1..=5).map(record).collect::<Vec<_>>(),
            "cut at {cut}"
        );
        assert_eq!(rec.end, last as u64);
        let expect_torn = (cut > last).then_some((last as u64, (cut - last) as u64));
        assert_eq!(
            rec.torn.as_ref().map(|t| (t.offset, t.bytes)),
            expect_torn,
            "cut at {cut}"
        );
        wal.append(&record(6)).expect("appends after the cut");
        drop(wal);
        let (_, again) = Wal::open("log", Arc::new(fs)).expect("reopens");
        assert_eq!(again.records.len(), 6);
        assert!(again.torn.is_none());
    }
}

#[test]
fn zeros_after_the_last_record_or_after_a_bad_last_frame_are_a_torn_tail() {
    let (mut bytes, starts) = image(1..=4);
    let last = *starts.last().expect("frames");
    bytes.extend_from_slice(&[0u8; 4096]);
    let (_, res) = open_bytes(&bytes);
    let (_, rec) = res.expect("opens");
    assert_eq!(rec.records.len(), 4);
    assert_eq!(rec.torn.map(|t| t.bytes), Some(4096));
    // A checksum mismatch in the last frame, zeros after it.
    bytes[last + 9] ^= 0x40;
    let (_, res) = open_bytes(&bytes);
    let (_, rec) = res.expect("opens");
    assert_eq!(rec.records.len(), 3);
    let torn = rec.torn.expect("torn");
    assert_eq!(torn.offset, last as u64);
    assert!(torn.reason.contains("checksum"), "{}", torn.reason);
}

#[test]
fn a_flipped_byte_anywhere_in_a_middle_frame_refuses_to_open_naming_its_offset() {
    let (bytes, starts) = image(1..=8);
    let (start, end) = (starts[3], starts[4]);
    for at in start..end {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        let (_, res) = open_bytes(&bad);
        match res {
            Err(e @ StoreError::CorruptLog { offset, .. }) => {
                assert_eq!(offset, start as u64, "flip at {at}");
                assert!(e.to_string().contains(&format!("at byte {start}")), "{e}");
            }
            other => panic!("flip at {at}: expected CorruptLog, got {other:?}"),
        }
    }
}

#[test]
fn repair_cuts_at_the_last_good_record_and_reports_what_was_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("graph.log");
    let (mut bytes, starts) = image(1..=10);
    bytes[starts[6] + 12] ^= 0xff;
    std::fs::write(&path, &bytes).expect("writes");
    let err = Wal::open_real(&path).expect_err("refuses");
    assert!(
        err.to_string()
            .contains(&format!("corrupt at byte {}", starts[6])),
        "{err}"
    );
    let report = wal::inspect(&path).expect("inspects");
    assert_eq!(report.records, 6);
    assert_eq!(report.last_version, Some(6));
    let corrupt = report.corrupt.expect("corrupt reported");
    assert_eq!(corrupt.offset, starts[6] as u64);
    assert_eq!(corrupt.bytes, (bytes.len() - starts[6]) as u64);
    assert!(
        corrupt.reason.contains("valid record follows"),
        "{}",
        corrupt.reason
    );
    let fixed = wal::repair(&path).expect("repairs");
    assert_eq!(fixed.kept_records, 6);
    assert_eq!(fixed.kept_bytes, starts[6] as u64);
    assert_eq!(fixed.dropped_bytes, (bytes.len() - starts[6]) as u64);
    assert_eq!(fixed.dropped_from_offset, Some(starts[6] as u64));
    let (wal, rec) = Wal::open_real(&path).expect("opens after repair");
    assert_eq!(rec.records, (1..=6).map(record).collect::<Vec<_>>());
    assert!(rec.torn.is_none());
    wal.append(&record(7)).expect("appends after repair");
    // Repairing a whole log changes nothing.
    drop(wal);
    let again = wal::repair(&path).expect("repairs");
    assert_eq!(
        (
            again.kept_records,
            again.dropped_bytes,
            again.dropped_from_offset
        ),
        (7, 0, None)
    );
}

#[test]
fn a_version_that_does_not_increase_is_corruption_and_is_refused_on_enqueue() {
    let (bytes, starts) = image([1, 2, 5, 4, 6]);
    let (_, res) = open_bytes(&bytes);
    match res {
        Err(StoreError::CorruptLog { offset, reason, .. }) => {
            assert_eq!(offset, starts[3] as u64);
            assert!(reason.contains("version 4 follows version 5"), "{reason}");
        }
        other => panic!("expected CorruptLog, got {other:?}"),
    }
    let (_, res) = open_bytes(&image([1, 2, 5]).0);
    let (wal, _) = res.expect("opens");
    for v in [5, 3] {
        let err = wal.enqueue(&record(v)).expect_err("refuses");
        assert!(
            matches!(err, StoreError::VersionOrder { last: 5, .. }),
            "{err}"
        );
    }
    wal.append(&record(9)).expect("a gap is fine");
}

#[test]
fn the_file_header_is_created_restored_when_torn_and_checked() {
    let header = codec::file_header();
    for len in 0..header.len() {
        let (_, res) = open_bytes(&header[..len]);
        let (wal, rec) = res.unwrap_or_else(|e| panic!("header cut at {len}: {e}"));
        assert!(rec.records.is_empty());
        assert_eq!(rec.end, codec::HEADER_LEN);
        wal.append(&record(1)).expect("appends");
    }
    let mut bad = image(1..=2).0;
    bad[0] = b'Q';
    let (_, res) = open_bytes(&bad);
    assert!(matches!(res, Err(StoreError::CorruptLog { offset: 0, .. })));
    let mut other = image(1..=2).0;
    other[8] = 2;
    let (_, res) = open_bytes(&other);
    let err = res.expect_err("refuses format 2");
    assert!(err.to_string().contains("log format 2"), "{err}");
    let fs = FaultyFs::new();
    fs.put(Path::new("log"), &bad);
    assert!(
        wal::repair_with(&fs, Path::new("log")).is_err(),
        "repair refuses a foreign file"
    );
}

#[test]
fn rewrite_after_keeps_only_later_records_and_the_log_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("graph.log");
    let (wal, _) = Wal::open_real(&path).expect("creates");
    for v in 1..=20 {
        wal.append(&record(v)).expect("appends");
    }
    assert_eq!(wal.rewrite_after(12).expect("rewrites"), 8);
    assert_eq!((wal.record_count(), wal.last_version()), (8, Some(20)));
    assert!(wal.enqueue(&record(20)).is_err(), "versions still increase");
    wal.append(&record(21)).expect("appends to the new file");
    assert_eq!(
        wal.size_bytes(),
        std::fs::metadata(&path).expect("stat").len()
    );
    assert_eq!(wal.rewrite_after(100).expect("rewrites"), 0);
    assert_eq!((wal.record_count(), wal.last_version()), (0, None));
    wal.append(&record(22)).expect("appends");
    drop(wal);
    let (_, rec) = Wal::open_real(&path).expect("reopens");
    assert_eq!(rec.records, vec![record(22)]);
    assert!(!path.with_extension("log.tmp").exists());
}

#[test]
fn a_large_torn_record_is_a_torn_tail_and_a_bad_length_before_one_is_corruption() {
    let big = |v: u64| Record {
        version: v,
        ops: (0..20_000i64)
            .map(|i| Op::AddEdge {
                u: ExternalId::Int(i * 3),
                v: ExternalId::Int(i * 3 + 1),
                w: Some(0.5),
            })
            .collect(),
    };
    let mut bytes = codec::file_header().to_vec();
    encode_frame(&record(1), &mut bytes).expect("encodes");
    let second = bytes.len();
    encode_frame(&big(2), &mut bytes).expect("encodes");
    let third = bytes.len();
    encode_frame(&big(3), &mut bytes).expect("encodes");
    for cut in [third + 9, third + 100_000, bytes.len() - 1] {
        let report = inspect_bytes(&bytes[..cut]);
        assert_eq!((report.records, report.corrupt), (2, None), "cut at {cut}");
        assert_eq!(report.torn.map(|t| t.offset), Some(third as u64));
    }
    let mut bad = bytes.clone();
    bad[second + 2] ^= 0x01; // the length of frame 2 now runs past the end
    let report = inspect_bytes(&bad);
    assert_eq!(report.records, 1);
    assert_eq!(report.corrupt.map(|c| c.offset), Some(second as u64));
}

fn arb_id() -> impl Strategy<Value = ExternalId> {
    prop_oneof![
        any::<i64>().prop_map(ExternalId::Int),
        ".{0,12}".prop_map(ExternalId::Str),
    ]
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        arb_id().prop_map(Op::AddVertex),
        arb_id().prop_map(Op::RemoveVertex),
        (arb_id(), arb_id(), proptest::option::of(any::<f64>()))
            .prop_map(|(u, v, w)| Op::AddEdge { u, v, w }),
        (arb_id(), arb_id()).prop_map(|(u, v)| Op::RemoveEdge { u, v }),
        (arb_id(), arb_id(), any::<f64>()).prop_map(|(u, v, w)| Op::SetWeight { u, v, w }),
    ]
}

/// Equality that treats NaN weights bit for bit.
fn same(a: &Record, b: &Record) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_record_round_trips_through_a_frame(version: u64, ops in proptest::collection::vec(arb_op(), 0..20)) {
        let rec = Record { version, ops };
        let mut buf = Vec::new();
        encode_frame(&rec, &mut buf).expect("encodes");
        let len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        prop_assert_eq!(len + 8, buf.len());
        prop_assert_eq!(u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]), crc32c::crc32c(&buf[8..]));
        let back = decode_payload(&buf[8..]).expect("decodes");
        prop_assert!(same(&back, &rec));
    }

    #[test]
    fn decoding_random_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_payload(&bytes);
        let _ = inspect_bytes(&bytes);
        let mut log = codec::file_header().to_vec();
        log.extend_from_slice(&bytes);
        let report = inspect_bytes(&log);
        prop_assert!(report.good_bytes <= report.bytes);
    }

    #[test]
    fn a_truncated_log_is_a_torn_prefix_never_corruption(n in 1u64..30, cut_frac in 0.0f64..1.0) {
        let (bytes, _) = image(1..=n);
        let cut = (bytes.len() as f64 * cut_frac) as usize;
        let report = inspect_bytes(&bytes[..cut]);
        prop_assert!(report.corrupt.is_none(), "{:?}", report.corrupt);
        prop_assert!(report.records <= n);
        if report.records > 0 {
            prop_assert_eq!(report.first_version, Some(1));
            prop_assert_eq!(report.last_version, Some(report.records));
        }
    }

    #[test]
    fn bit_flips_never_panic_and_keep_a_prefix_of_the_records(n in 1u64..20, flips in proptest::collection::vec((any::<usize>(), 0u8..8), 1..4)) {
        let (mut bytes, _) = image(1..=n);
        for (at, bit) in flips {
            let at = at % bytes.len();
            bytes[at] ^= 1 << bit;
        }
        let _ = decode_payload(&bytes);
        let report = inspect_bytes(&bytes);
        prop_assert!(report.records <= n);
        if let Some(last) = report.last_version {
            prop_assert_eq!(last, report.records);
        }
    }
}
