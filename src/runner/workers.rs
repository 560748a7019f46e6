//! The threads passes run on: one shared queue of jobs in, one list of results out.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use tokio::sync::Notify;

pub(crate) struct Workers<J, R> {
    shared: Arc<Shared<J, R>>,
    run: Arc<dyn Fn(J) -> R + Send + Sync>,
    threads: Vec<JoinHandle<()>>,
    limit: usize,
}

struct Shared<J, R> {
    state: Mutex<State<J, R>>,
    /// Threads wait here for a job.
    job_queued: Condvar,
    /// The scheduler waits here for results.
    results_ready: Notify,
    /// Results are told at once while at most this many jobs wait.
    low: usize,
}

struct State<J, R> {
    jobs: VecDeque<J>,
    results: Vec<R>,
    /// The scheduler was told of results it has not taken yet.
    told: bool,
    /// Threads waiting for a job.
    idle: usize,
    closed: bool,
}

impl<J, R> Shared<J, R> {
    fn lock(&self) -> MutexGuard<'_, State<J, R>> {
        // Jobs run outside the lock: a panicking job cannot leave the queue half-changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<J: Send + 'static, R: Send + 'static> Workers<J, R> {
    /// At most `limit` threads; up to `ahead` jobs queued, results told at half that.
    pub(crate) fn new(
        limit: usize,
        ahead: usize,
        run: impl Fn(J) -> R + Send + Sync + 'static,
    ) -> Self {
        let limit = limit.max(1);
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    jobs: VecDeque::new(),
                    results: Vec::new(),
                    told: false,
                    idle: 0,
                    closed: false,
                }),
                job_queued: Condvar::new(),
                results_ready: Notify::new(),
                low: ahead / 2,
            }),
            run: Arc::new(run),
            threads: Vec::new(),
            limit,
        }
    }

    /// Queues a job for an idle thread, a new one (below the limit), or the first to finish.
    pub(crate) fn run(&mut self, job: J) {
        let mut state = self.shared.lock();
        state.jobs.push_back(job);
        // A thread woken for an earlier job still counts as idle until it takes one.
        let wake = state.idle >= state.jobs.len();
        let spawn = state.jobs.len() > state.idle && self.threads.len() < self.limit;
        drop(state);
        if wake {
            self.shared.job_queued.notify_one();
        }
        if spawn {
            self.spawn();
        }
    }

    fn spawn(&mut self) {
        let shared = self.shared.clone();
        let run = self.run.clone();
        let thread = std::thread::Builder::new()
            .name("bmhctl-pass".into())
            .spawn(move || {
                let mut job = next_job(&shared, shared.lock());
                while let Some(j) = job {
                    let result = run(j);
                    let mut state = shared.lock();
                    state.results.push(result);
                    job = next_job(&shared, state);
                }
            })
            .expect("a worker thread starts");
        self.threads.push(thread);
    }

    /// Waits until results were told (at once if some were told since the last take).
    pub(crate) async fn results_ready(&self) {
        self.shared.results_ready.notified().await;
    }

    /// The results so far, oldest first.
    pub(crate) fn take_results(&mut self) -> Vec<R> {
        let mut state = self.shared.lock();
        state.told = false;
        std::mem::take(&mut state.results)
    }

    /// Takes back the jobs no thread has started yet, in the order they were queued.
    pub(crate) fn take_queued(&mut self) -> Vec<J> {
        self.shared.lock().jobs.drain(..).collect()
    }

    /// Leaves the threads behind: each ends after its job, or with the process.
    pub(crate) fn abandon(&mut self) {
        self.close();
        self.threads.clear();
    }

    /// Ends the threads once the queue is empty, and waits for them.
    pub(crate) fn stop(&mut self) {
        self.close();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }

    fn close(&mut self) {
        self.shared.lock().closed = true;
        self.shared.job_queued.notify_all();
    }
}

/// The next job for a thread (`None` once closed and empty), telling results when low.
fn next_job<'a, J, R>(
    shared: &'a Shared<J, R>,
    mut state: MutexGuard<'a, State<J, R>>,
) -> Option<J> {
    let mut yielded = false;
    loop {
        let job = state.jobs.pop_front();
        if !state.results.is_empty() && !state.told && state.jobs.len() <= shared.low {
            state.told = true;
            shared.results_ready.notify_one();
        }
        if job.is_some() {
            return job;
        }
        if state.closed {
            return None;
        }
        if !yielded {
            // The scheduler was just told of results: let it run before sleeping.
            yielded = true;
            drop(state);
            std::thread::yield_now();
            state = shared.lock();
            continue;
        }
        state.idle += 1;
        state = shared
            .job_queued
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
        state.idle -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    fn results_of<J: Send + 'static, R: Send + 'static>(
        workers: &mut Workers<J, R>,
        n: usize,
    ) -> Vec<R> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut all = Vec::new();
        while all.len() < n {
            rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(10), workers.results_ready())
                    .await
                    .expect("results are told")
            });
            all.extend(workers.take_results());
        }
        all
    }

    #[test]
    fn never_more_than_the_limit_run_at_once_and_every_result_is_told() {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let (r, m) = (running.clone(), most.clone());
        let mut workers = Workers::new(3, 3, move |n: usize| {
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            m.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            r.fetch_sub(1, Ordering::SeqCst);
            n * 10
        });
        for n in 0..30 {
            workers.run(n);
        }
        let mut seen = results_of(&mut workers, 30);
        workers.stop();
        seen.sort();
        assert_eq!(seen, (0..30).map(|n| n * 10).collect::<Vec<_>>());
        assert!(most.load(Ordering::SeqCst) <= 3);
        assert!(workers.threads.is_empty());
    }

    #[test]
    fn a_result_is_told_at_once_when_nothing_waits() {
        let mut workers = Workers::new(4, 4, |n: usize| n + 1);
        workers.run(1);
        assert_eq!(results_of(&mut workers, 1), vec![2]);
        workers.run(2);
        assert_eq!(results_of(&mut workers, 1), vec![3]);
        workers.stop();
    }

    #[test]
    fn queued_jobs_are_taken_back_in_order_and_never_run() {
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Mutex::new(release_rx);
        let mut workers = Workers::new(1, 1, move |n: usize| {
            started_tx.send(n).unwrap();
            release_rx.lock().unwrap().recv().unwrap();
            n
        });
        for n in 0..4 {
            workers.run(n);
        }
        assert_eq!(started_rx.recv().unwrap(), 0);
        assert_eq!(workers.take_queued(), vec![1, 2, 3]);
        release_tx.send(()).unwrap();
        assert_eq!(results_of(&mut workers, 1), vec![0]);
        workers.stop();
        assert!(started_rx.try_recv().is_err(), "a taken-back job ran");
    }
}
