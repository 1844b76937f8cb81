//! Shared by the wal_* tests: deterministic records and a model check.
#![allow(dead_code)]
use plexus_graph::ExternalId;
use plexus_store::wal::Record;
use plexus_store::Op;

/// The record a test commits as `version`: 0 to 4 ops of every kind, integer
/// and string ids, so every record is different and checkable.
pub fn record(version: u64) -> Record {
    let n = (version % 5) as usize;
    let id = |k: u64| {
        if (version + k).is_multiple_of(3) {
            ExternalId::Str(format!("v{}-{k}", version))
        } else {
            ExternalId::Int(version as i64 * 10 - k as i64)
        }
    };
    let ops = (0..n as u64)
        .map(|k| match (version + k) % 5 {
            0 => Op::AddVertex(id(k)),
            1 => Op::RemoveVertex(id(k)),
            2 => Op::AddEdge {
                u: id(k),
                v: id(k + 1),
                w: k.is_multiple_of(2).then_some(version as f64 * 0.5),
            },
            3 => Op::RemoveEdge {
                u: id(k),
                v: id(k + 7),
            },
            _ => Op::SetWeight {
                u: id(k),
                v: id(k + 2),
                w: -(k as f64),
            },
        })
        .collect();
    Record { version, ops }
}

/// The model check after a crash: `recovered` is a prefix of `attempted`
/// (in log order, with the commits known to have failed removed), holds
/// every acknowledged version, and each record is the one committed.
pub fn check_recovered(
    recovered: &[Record],
    attempted: &[u64],
    failed: &[u64],
    acked: &[u64],
) -> Result<(), String> {
    let expected: Vec<u64> = attempted
        .iter()
        .copied()
        .filter(|v| !failed.contains(v))
        .collect();
    let got: Vec<u64> = recovered.iter().map(|r| r.version).collect();
    if got.len() > expected.len() || got[..] != expected[..got.len()] {
        return Err(format!(
            "recovered {got:?} is not a prefix of the attempted {expected:?}"
        ));
    }
    for a in acked {
        if !got.contains(a) {
            return Err(format!(
                "acknowledged version {a} was lost; recovered {got:?}"
            ));
        }
    }
    for r in recovered {
        if *r != record(r.version) {
            return Err(format!("version {} came back different: {r:?}", r.version));
        }
    }
    Ok(())
}
