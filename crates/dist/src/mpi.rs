//! [`MpiComm`]: the MPI transport (rsmpi over the system's OpenMPI), one
//! rank per process under `mpirun`. Built with the cargo feature `mpi`.
//!
//! Collectives are MPI's own (`MPI_Alltoallv`, `MPI_Allgatherv`,
//! `MPI_Allreduce`, `MPI_Barrier`); point-to-point messages are
//! `MPI_Send`/`MPI_Recv` of bytes on `MPI_COMM_WORLD`.
//!
//! Threads: MPI is initialised `MPI_THREAD_FUNNELED` and only the thread
//! that initialised it calls MPI (the executor calls its [`Comm`] from the
//! rank's own thread, never from rayon workers): OpenMPI communicators
//! cannot cross threads (rsmpi issue 115). [`MpiComm`] holds no
//! communicator handle, only the rank and size; each call names
//! `MPI_COMM_WORLD` afresh.
//!
//! Faults: OpenMPI's default error handler aborts the job on a transport
//! error, and `mpirun` ends every rank when one dies, naming it. A message
//! over 2 GiB (MPI's `int` counts) is refused with [`DistError::Invalid`].
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;

use crate::comm::Comm;
use crate::error::{DistError, Result};

/// This process's rank of `MPI_COMM_WORLD` (see the module docs).
#[derive(Debug)]
pub struct MpiComm {
    rank: usize,
    size: usize,
}

/// Initialises MPI on the calling thread; keep the [`Universe`] alive for
/// as long as the [`MpiComm`] is used (dropping it finalises MPI).
pub fn init() -> Result<(Universe, MpiComm)> {
    let (universe, _level) = mpi::initialize_with_threading(Threading::Funneled)
        .ok_or_else(|| DistError::Invalid("MPI is already initialised".into()))?;
    let w = universe.world();
    let comm = MpiComm {
        rank: usize::try_from(w.rank()).unwrap_or(0),
        size: usize::try_from(w.size()).unwrap_or(1),
    };
    Ok((universe, comm))
}

/// Whether this process was started by OpenMPI's `mpirun` (or another
/// launcher that sets `OMPI_COMM_WORLD_SIZE` or `PMI_SIZE`).
pub fn launched_by_mpirun() -> bool {
    std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() || std::env::var_os("PMI_SIZE").is_some()
}

/// Ends every rank of the job (`MPI_Abort` on `MPI_COMM_WORLD`) with exit
/// status `code`: for a rank that failed while the others may wait in a
/// collective (finalising instead could leave them waiting).
pub fn abort(code: i32) -> ! {
    world().abort(code)
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

/// `x` as an MPI count.
fn count(x: usize) -> Result<i32> {
    i32::try_from(x).map_err(|_| DistError::Invalid(format!("{x} bytes exceed MPI's 2 GiB count")))
}

/// Displacements of consecutive blocks of `counts`.
fn displs(counts: &[i32]) -> Result<Vec<i32>> {
    let mut out = Vec::with_capacity(counts.len());
    let mut at = 0usize;
    for &c in counts {
        out.push(count(at)?);
        at += usize::try_from(c).unwrap_or(0);
    }
    count(at)?;
    Ok(out)
}

/// Backs empty buffers handed to MPI.
static EMPTY: [u8; 1] = [0];

/// `bytes`, or an empty slice that does not point at address 1 when
/// `bytes` is empty: a Rust empty `&[u8]` points at 1, which is OpenMPI's
/// `MPI_IN_PLACE`, so an empty send buffer would be taken for "in place"
/// (`MPI_Allgatherv` then fails with `MPI_ERR_ARG`).
fn not_in_place(bytes: &[u8]) -> &[u8] {
    if bytes.is_empty() {
        &EMPTY[..0]
    } else {
        bytes
    }
}

/// A zeroed receive buffer of `len` bytes whose pointer is a real
/// allocation even when `len == 0` (see [`not_in_place`]); use `[..len]`.
fn recv_buffer(len: usize) -> Vec<u8> {
    vec![0u8; len.max(1)]
}

/// Splits `flat` into blocks of `counts`.
fn split(flat: &[u8], counts: &[i32]) -> Vec<Vec<u8>> {
    let mut at = 0usize;
    counts
        .iter()
        .map(|&c| {
            let c = usize::try_from(c).unwrap_or(0);
            let b = flat[at..at + c].to_vec();
            at += c;
            b
        })
        .collect()
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn send(&self, to: usize, bytes: Vec<u8>) -> Result<()> {
        count(bytes.len())?;
        world()
            .process_at_rank(count(to)?)
            .send(not_in_place(&bytes[..]));
        Ok(())
    }
    fn recv(&self, from: usize) -> Result<Vec<u8>> {
        let (bytes, _status) = world().process_at_rank(count(from)?).receive_vec::<u8>();
        Ok(bytes)
    }

    fn all_to_all(&self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        if out.len() != self.size {
            return Err(DistError::Invalid(format!(
                "all_to_all with {} buffers for {} ranks",
                out.len(),
                self.size
            )));
        }
        let w = world();
        let send_counts = out
            .iter()
            .map(|b| count(b.len()))
            .collect::<Result<Vec<i32>>>()?;
        let mut recv_counts = vec![0i32; self.size];
        w.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let send_displs = displs(&send_counts)?;
        let recv_displs = displs(&recv_counts)?;
        let flat: Vec<u8> = out.concat();
        let total: usize = recv_counts
            .iter()
            .map(|&c| usize::try_from(c).unwrap_or(0))
            .sum();
        let mut rflat = recv_buffer(total);
        {
            let send = Partition::new(not_in_place(&flat[..]), &send_counts[..], &send_displs[..]);
            let mut recv =
                PartitionMut::new(&mut rflat[..total], &recv_counts[..], &recv_displs[..]);
            w.all_to_all_varcount_into(&send, &mut recv);
        }
        Ok(split(&rflat, &recv_counts))
    }

    fn all_gather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let w = world();
        let len = count(mine.len())?;
        let mut counts = vec![0i32; self.size];
        w.all_gather_into(&len, &mut counts[..]);
        let ds = displs(&counts)?;
        let total: usize = counts
            .iter()
            .map(|&c| usize::try_from(c).unwrap_or(0))
            .sum();
        let mut flat = recv_buffer(total);
        {
            let mut recv = PartitionMut::new(&mut flat[..total], &counts[..], &ds[..]);
            w.all_gather_varcount_into(not_in_place(mine), &mut recv);
        }
        Ok(split(&flat, &counts))
    }

    fn all_reduce_sum(&self, xs: &[u64]) -> Result<Vec<u64>> {
        let mut out = vec![0u64; xs.len()];
        world().all_reduce_into(xs, &mut out[..], SystemOperation::sum());
        Ok(out)
    }

    fn all_reduce_or(&self, xs: &[u64]) -> Result<Vec<u64>> {
        let mut out = vec![0u64; xs.len()];
        world().all_reduce_into(xs, &mut out[..], SystemOperation::bitwise_or());
        Ok(out)
    }

    fn barrier(&self) -> Result<()> {
        world().barrier();
        Ok(())
    }
}
