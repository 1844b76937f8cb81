//! The communication trait every rank talks through, and its in-process
//! implementation ([`ThreadComm`]: ranks as threads, channels between them).
//!
//! A [`Comm`] connects `size()` ranks numbered `0..size()`. Point-to-point
//! messages are byte vectors, delivered in order per (sender, receiver)
//! pair. The collectives have default implementations over the
//! point-to-point pair; a transport with native collectives (MPI) overrides
//! them. Every collective must be called by every rank, in the same order
//! (SPMD), and returns the same value on every rank.
//!
//! Threads: a [`Comm`] is used by the one thread that runs its rank (the
//! executor never calls it from its rayon workers), as OpenMPI requires
//! (rsmpi issue 115: a communicator must not cross threads).
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::Duration;

use crate::error::{DistError, Result};

/// Ranks joined by a transport (see the module docs).
pub trait Comm: Sync {
    /// This rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks, at least 1.
    fn size(&self) -> usize;
    /// Sends `bytes` to rank `to` (not this rank). May return before the
    /// receiver has it.
    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<()>;
    /// The next message from rank `from` (not this rank), waiting for it.
    fn recv(&self, from: usize) -> Result<Vec<u8>>;

    /// Sends `out[r]` to every rank `r` (`out.len() == size()`) and returns
    /// what every rank sent this one, indexed by sender (this rank's own
    /// entry is `out[rank()]`).
    fn all_to_all(&self, mut out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        let (me, p) = (self.rank(), self.size());
        if out.len() != p {
            return Err(DistError::Invalid(format!(
                "all_to_all with {} buffers for {p} ranks",
                out.len()
            )));
        }
        let own = std::mem::take(&mut out[me]);
        for (r, bytes) in out.into_iter().enumerate() {
            if r != me {
                self.send(r, bytes)?;
            }
        }
        (0..p)
            .map(|r| {
                if r == me {
                    Ok(own.clone())
                } else {
                    self.recv(r)
                }
            })
            .collect()
    }

    /// Every rank's `mine`, indexed by rank.
    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.all_to_all(vec![mine.to_vec(); self.size()])
    }

    /// Element-wise sums over the ranks (wrapping), of slices of equal
    /// length on every rank.
    fn all_reduce_sum(&self, xs: &[u64]) -> Result<Vec<u64>> {
        reduce(self, xs, u64::wrapping_add)
    }

    /// Element-wise bitwise or over the ranks.
    fn all_reduce_or(&self, xs: &[u64]) -> Result<Vec<u64>> {
        reduce(self, xs, |a, b| a | b)
    }

    /// Returns once every rank has called it.
    fn barrier(&self) -> Result<()> {
        self.all_gather(&[]).map(|_| ())
    }
}

/// `xs` reduced element-wise over the ranks with `op`, in rank order.
fn reduce<C: Comm + ?Sized>(c: &C, xs: &[u64], op: impl Fn(u64, u64) -> u64) -> Result<Vec<u64>> {
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let all = c.all_gather(&bytes)?;
    let mut acc: Option<Vec<u64>> = None;
    for (r, b) in all.iter().enumerate() {
        if b.len() != bytes.len() {
            return Err(DistError::Mismatch {
                rank: c.rank(),
                what: format!(
                    "rank {r} reduced {} words, this rank {}",
                    b.len() / 8,
                    xs.len()
                ),
            });
        }
        let words = b
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
        acc = Some(match acc {
            None => words.collect(),
            Some(a) => a.into_iter().zip(words).map(|(x, y)| op(x, y)).collect(),
        });
    }
    Ok(acc.unwrap_or_default())
}

/// One rank of a group of ranks that are threads of this process
/// ([`ThreadComm::group`]): an unbounded channel per ordered pair of ranks.
#[derive(Debug)]
pub struct ThreadComm {
    rank: usize,
    /// `to[r]`: the channel to rank `r` (unused for this rank).
    to: Vec<Sender<Vec<u8>>>,
    /// `from[r]`: the channel from rank `r`.
    from: Vec<Mutex<Receiver<Vec<u8>>>>,
    timeout: Duration,
}

impl ThreadComm {
    /// `size` connected ranks; a receive that waits longer than `timeout`
    /// fails with [`DistError::Timeout`], and one from a rank whose
    /// [`ThreadComm`] was dropped (its thread ended or panicked) with
    /// [`DistError::Lost`] once its queued messages are read.
    pub fn group(size: usize, timeout: Duration) -> Result<Vec<ThreadComm>> {
        if size == 0 {
            return Err(DistError::Invalid("a group needs at least one rank".into()));
        }
        let mut to: Vec<Vec<Sender<Vec<u8>>>> = (0..size).map(|_| Vec::new()).collect();
        let mut from: Vec<Vec<Mutex<Receiver<Vec<u8>>>>> = (0..size).map(|_| Vec::new()).collect();
        for senders in to.iter_mut() {
            for receiver_row in from.iter_mut() {
                let (tx, rx) = channel();
                senders.push(tx);
                receiver_row.push(Mutex::new(rx));
            }
        }
        Ok(to
            .into_iter()
            .zip(from)
            .enumerate()
            .map(|(rank, (to, from))| ThreadComm {
                rank,
                to,
                from,
                timeout,
            })
            .collect())
    }

    fn check_peer(&self, peer: usize) -> Result<()> {
        if peer >= self.to.len() || peer == self.rank {
            return Err(DistError::Invalid(format!(
                "rank {}: no peer {peer} among {} ranks",
                self.rank,
                self.to.len()
            )));
        }
        Ok(())
    }
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.to.len()
    }
    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<()> {
        self.check_peer(to)?;
        self.to[to].send(bytes).map_err(|_| DistError::Lost {
            rank: self.rank,
            peer: to,
        })
    }
    fn recv(&self, from: usize) -> Result<Vec<u8>> {
        self.check_peer(from)?;
        let rx = self.from[from].lock().unwrap_or_else(|e| e.into_inner());
        rx.recv_timeout(self.timeout).map_err(|e| match e {
            RecvTimeoutError::Timeout => DistError::Timeout {
                rank: self.rank,
                peer: from,
                secs: self.timeout.as_secs(),
            },
            RecvTimeoutError::Disconnected => DistError::Lost {
                rank: self.rank,
                peer: from,
            },
        })
    }
}

/// Runs `f` on `size` thread ranks joined by a [`ThreadComm`] group and
/// returns each rank's result, indexed by rank (`Err` holds a rank's panic
/// payload). Ranks run on scoped threads; rayon work inside `f` runs on the
/// current rayon pool.
pub fn run_threads<T: Send>(
    size: usize,
    timeout: Duration,
    f: impl Fn(ThreadComm) -> T + Sync,
) -> Result<Vec<std::thread::Result<T>>> {
    let comms = ThreadComm::group(size, timeout)?;
    let f = &f;
    Ok(std::thread::scope(|s| {
        let handles: Vec<_> = comms.into_iter().map(|c| s.spawn(move || f(c))).collect();
        handles.into_iter().map(|h| h.join()).collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(10);

    #[test]
    fn collectives_agree_on_every_rank() {
        for p in 1..=4 {
            let out = run_threads(p, T, |c| {
                let me = c.rank() as u64;
                let sum = c.all_reduce_sum(&[me, 1]).unwrap();
                let or = c.all_reduce_or(&[1 << me]).unwrap();
                let g = c.all_gather(&[me as u8]).unwrap();
                let out = (0..c.size()).map(|r| vec![me as u8, r as u8]).collect();
                let got = c.all_to_all(out).unwrap();
                c.barrier().unwrap();
                (sum, or, g, got)
            })
            .unwrap();
            for (r, res) in out.into_iter().enumerate() {
                let (sum, or, g, got) = res.unwrap();
                let p64 = p as u64;
                assert_eq!(sum, vec![p64 * (p64 - 1) / 2, p64]);
                assert_eq!(or, vec![(1 << p) - 1]);
                assert_eq!(g, (0..p).map(|q| vec![q as u8]).collect::<Vec<_>>());
                assert_eq!(
                    got,
                    (0..p).map(|q| vec![q as u8, r as u8]).collect::<Vec<_>>()
                );
            }
        }
    }

    #[test]
    fn a_lost_rank_is_named_and_a_silent_one_times_out() {
        let out = run_threads(3, Duration::from_millis(300), |c| match c.rank() {
            0 => Ok(Vec::new()),
            1 => c.recv(0),
            _ => {
                let r = c.recv(1);
                drop(c);
                r
            }
        })
        .unwrap();
        let errs: Vec<_> = out.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(errs[1], Err(DistError::Lost { rank: 1, peer: 0 }));
        assert!(matches!(
            errs[2],
            Err(DistError::Timeout {
                rank: 2,
                peer: 1,
                ..
            }) | Err(DistError::Lost { rank: 2, peer: 1 })
        ));
    }
}
