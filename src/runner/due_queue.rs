//! The hosts' next passes by due time: a heap, with a queue in front for in-order entries.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

/// A pass due: when, which host, and the host's token when it was scheduled.
pub(crate) type Due = (Instant, usize, u64);

/// Gives the entries back smallest first, as one heap of them all would (ties included).
#[derive(Default)]
pub(crate) struct DueQueue {
    /// Entries each no smaller than the one before.
    ordered: VecDeque<Due>,
    /// The others.
    heap: BinaryHeap<Reverse<Due>>,
}

impl DueQueue {
    pub(crate) fn push(&mut self, due: Due) {
        match self.ordered.back() {
            Some(last) if due < *last => self.heap.push(Reverse(due)),
            _ => self.ordered.push_back(due),
        }
    }

    pub(crate) fn peek(&self) -> Option<Due> {
        match (self.ordered.front(), self.heap.peek()) {
            (Some(&a), Some(&Reverse(b))) => Some(a.min(b)),
            (a, b) => a.copied().or(b.map(|Reverse(d)| *d)),
        }
    }

    pub(crate) fn pop(&mut self) -> Option<Due> {
        let from_heap = match (self.ordered.front(), self.heap.peek()) {
            (Some(a), Some(Reverse(b))) => b < a,
            (None, _) => true,
            (Some(_), None) => false,
        };
        if from_heap {
            self.heap.pop().map(|Reverse(d)| d)
        } else {
            self.ordered.pop_front()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Due, DueQueue};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    use std::time::{Duration, Instant};

    /// Pushes and pops interleaved at random, with times mostly rising (as a run's) and some
    /// going back, ties on time: the same entries come out in the same order as from a heap.
    #[test]
    fn entries_come_out_as_from_one_heap() {
        let base = Instant::now();
        for seed in 0..50 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let (mut queue, mut heap) = (DueQueue::default(), BinaryHeap::new());
            let mut clock = 0u64;
            let mut popped = 0;
            for token in 0..2000u64 {
                if rng.u8(..) < 150 {
                    clock += rng.u64(0..3);
                    let at = match rng.u8(..) {
                        0..40 => clock.saturating_sub(rng.u64(0..20)),
                        _ => clock,
                    };
                    let due: Due = (base + Duration::from_nanos(at), rng.usize(0..50), token);
                    queue.push(due);
                    heap.push(Reverse(due));
                } else {
                    assert_eq!(queue.peek(), heap.peek().map(|Reverse(d)| *d));
                    let got = queue.pop();
                    assert_eq!(got, heap.pop().map(|Reverse(d)| d));
                    popped += usize::from(got.is_some());
                }
            }
            while let Some(Reverse(d)) = heap.pop() {
                assert_eq!(queue.pop(), Some(d));
            }
            assert_eq!(queue.pop(), None);
            assert!(popped > 100, "seed {seed}: only {popped} popped");
        }
    }

    #[test]
    fn an_empty_queue_gives_nothing() {
        let mut queue = DueQueue::default();
        assert_eq!((queue.peek(), queue.pop()), (None, None));
    }
}
