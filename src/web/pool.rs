//! A bounded pool of search threads: searches never run on the async
//! workers, a few threads do them one at a time each, and at most `queue`
//! wait; beyond that the server answers 503 at once instead of piling up work
//! (FIELD-NOTES: one thread per client is a trap on two cores). A search that
//! waited longer than the budget is answered 503 when its turn comes, without
//! running: a thread is not held for a client that has waited too long.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Why a job did not run to an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    #[error("the server is busy; try again in a moment")]
    Busy,
    #[error("the search failed unexpectedly")]
    Failed,
}

/// The search threads and their queue.
pub struct SearchPool {
    sender: SyncSender<Job>,
    threads: usize,
    budget: Duration,
}

impl SearchPool {
    /// Starts `threads` threads (at least one) with room for `queue` waiting
    /// jobs, each of which may wait `budget` for its turn.
    pub fn new(threads: usize, queue: usize, budget: Duration) -> SearchPool {
        let threads = threads.max(1);
        let (sender, receiver) = sync_channel::<Job>(queue.max(1));
        let receiver = Arc::new(Mutex::new(receiver));
        for number in 0..threads {
            let receiver = Arc::clone(&receiver);
            let spawned = std::thread::Builder::new()
                .name(format!("search-{number}"))
                .spawn(move || work(&receiver));
            if let Err(error) = spawned {
                tracing::error!(%error, "cannot start a search thread");
            }
        }
        SearchPool {
            sender,
            threads,
            budget,
        }
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `job` on a search thread and waits for its answer without
    /// blocking the caller's async worker.
    pub async fn run<T, F>(&self, job: F) -> Result<T, PoolError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let (queued, budget) = (Instant::now(), self.budget);
        let wrapped: Job = Box::new(move || {
            if queued.elapsed() > budget {
                let _ = answer.send(Err(PoolError::Busy));
                return;
            }
            // A panic stays in this job: the thread lives on, the request gets a 500.
            let outcome = catch_unwind(AssertUnwindSafe(job)).map_err(|_| PoolError::Failed);
            let _ = answer.send(outcome);
        });
        match self.sender.try_send(wrapped) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(PoolError::Busy),
            Err(TrySendError::Disconnected(_)) => return Err(PoolError::Failed),
        }
        answered.await.map_err(|_| PoolError::Failed)?
    }
}

fn work(receiver: &Mutex<Receiver<Job>>) {
    loop {
        let job = {
            let Ok(receiver) = receiver.lock() else {
                return;
            };
            match receiver.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[actix_web::test]
    async fn jobs_run_off_the_caller_and_a_panic_is_an_error_not_a_dead_thread() {
        let pool = SearchPool::new(1, 4, Duration::from_secs(10));
        let caller = std::thread::current().id();
        let ran_on = pool.run(move || std::thread::current().id()).await.unwrap();
        assert_ne!(ran_on, caller);
        let failed = pool.run(|| -> u32 { panic!("a bad job") }).await;
        assert_eq!(failed, Err(PoolError::Failed));
        assert_eq!(pool.run(|| 7).await, Ok(7), "the thread survived the panic");
    }

    #[actix_web::test]
    async fn a_full_queue_answers_busy_at_once() {
        let pool = Arc::new(SearchPool::new(1, 1, Duration::from_secs(10)));
        let started = Arc::new(AtomicUsize::new(0));
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(wait));
        // One job holds the thread, one waits in the queue...
        let mut running = Vec::new();
        for _ in 0..2 {
            let (pool, started, wait) = (pool.clone(), started.clone(), wait.clone());
            running.push(actix_web::rt::spawn(async move {
                pool.run(move || {
                    started.fetch_add(1, Ordering::SeqCst);
                    let _ = wait.lock().unwrap().recv_timeout(Duration::from_secs(10));
                })
                .await
            }));
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
        // ...so the third is refused.
        assert_eq!(pool.run(|| ()).await, Err(PoolError::Busy));
        release.send(()).unwrap();
        release.send(()).unwrap();
        for handle in running {
            assert_eq!(handle.await.unwrap(), Ok(()));
        }
        assert_eq!(started.load(Ordering::SeqCst), 2);
    }

    #[actix_web::test]
    async fn a_job_that_waited_past_the_budget_is_answered_busy_without_running() {
        let pool = Arc::new(SearchPool::new(1, 4, Duration::from_millis(100)));
        let ran = Arc::new(AtomicUsize::new(0));
        // One job holds the thread for longer than the budget...
        let holding = {
            let pool = pool.clone();
            actix_web::rt::spawn(async move {
                pool.run(|| std::thread::sleep(Duration::from_millis(400)))
                    .await
            })
        };
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        // ...so the one queued behind it is refused when its turn comes.
        let counted = ran.clone();
        let waited = pool
            .run(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            })
            .await;
        assert_eq!(waited, Err(PoolError::Busy));
        assert_eq!(ran.load(Ordering::SeqCst), 0, "the late job never ran");
        assert_eq!(holding.await.unwrap(), Ok(()));
        // A job that finds the thread free runs.
        assert_eq!(pool.run(|| 7).await, Ok(7));
    }
}
