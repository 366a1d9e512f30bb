//! The search of `lab bisect`: over the commits after the good one up to the bad one (oldest
//! first), the first that is slower. Each step tries the untried commit nearest the middle of
//! what is still open; a commit whose step was inconclusive is skipped, as `git bisect skip`
//! does, and when only skipped commits lie before the first slower one, the answer is all of
//! them: the first slower commit is one of those.

use std::collections::BTreeSet;

/// What is known of `n` commits, the last of them the bad one.
#[derive(Debug)]
pub(super) struct Search {
    /// The newest commit known not to be slower; `None`: only the good one, before them all.
    not_slower: Option<usize>,
    /// The oldest commit known to be slower.
    slower: usize,
    skipped: BTreeSet<usize>,
}

impl Search {
    /// `n` commits (n ≥ 1), the last known slower.
    pub(super) fn new(n: usize) -> Search {
        Search {
            not_slower: None,
            slower: n.saturating_sub(1),
            skipped: BTreeSet::new(),
        }
    }

    /// The commits still open: after the newest not slower, up to the oldest slower.
    fn open(&self) -> std::ops::Range<usize> {
        self.not_slower.map_or(0, |i| i + 1)..self.slower
    }

    /// The commit to try next: the untried one nearest the middle of the open commits (the
    /// older of two as near); `None` when every open commit was tried or skipped.
    pub(super) fn next(&self) -> Option<usize> {
        let open = self.open();
        let middle = (open.start + open.end) / 2;
        open.filter(|i| !self.skipped.contains(i))
            .min_by_key(|i| (i.abs_diff(middle), *i))
    }

    pub(super) fn slower_at(&mut self, i: usize) {
        self.slower = self.slower.min(i);
    }

    pub(super) fn not_slower_at(&mut self, i: usize) {
        self.not_slower = Some(self.not_slower.map_or(i, |n| n.max(i)));
    }

    pub(super) fn skip(&mut self, i: usize) {
        self.skipped.insert(i);
    }

    /// The commits the first slower one is among, oldest first: one where the search
    /// decided, more where skipped commits lie before the oldest slower one.
    pub(super) fn first_slower(&self) -> Vec<usize> {
        let open = self.open();
        open.chain(std::iter::once(self.slower)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search over `n` commits where the first slower is `culprit` and the commits in
    /// `inconclusive` cannot be decided; the commits tried and the answer.
    fn search(n: usize, culprit: usize, inconclusive: &[usize]) -> (Vec<usize>, Vec<usize>) {
        let mut s = Search::new(n);
        let mut tried = Vec::new();
        while let Some(i) = s.next() {
            tried.push(i);
            if inconclusive.contains(&i) {
                s.skip(i);
            } else if i >= culprit {
                s.slower_at(i);
            } else {
                s.not_slower_at(i);
            }
        }
        (tried, s.first_slower())
    }

    #[test]
    fn eight_commits_take_three_steps_wherever_the_culprit_is() {
        for culprit in 0..8 {
            let (tried, found) = search(8, culprit, &[]);
            assert_eq!(found, vec![culprit], "{tried:?}");
            assert!(tried.len() <= 3, "culprit {culprit}: {tried:?}");
        }
    }

    #[test]
    fn eleven_commits_take_at_most_four_steps() {
        for culprit in 0..11 {
            let (tried, found) = search(11, culprit, &[]);
            assert_eq!(found, vec![culprit]);
            assert!(tried.len() <= 4, "culprit {culprit}: {tried:?}");
        }
    }

    #[test]
    fn an_inconclusive_commit_is_skipped_and_the_search_goes_on_beside_it() {
        // Commits 0..8, the culprit 5; the middle one, 3, cannot be decided.
        let (tried, found) = search(8, 5, &[3]);
        assert_eq!(tried[0], 3);
        assert!(!tried[1..].contains(&3));
        assert_eq!(found, vec![5]);
    }

    #[test]
    fn skipped_commits_just_before_the_culprit_leave_it_ambiguous() {
        let (tried, found) = search(8, 5, &[4]);
        assert_eq!(found, vec![4, 5], "{tried:?}");
        let (_, found) = search(8, 5, &[3, 4]);
        assert_eq!(found, vec![3, 4, 5]);
    }

    #[test]
    fn one_commit_is_its_own_answer() {
        let (tried, found) = search(1, 0, &[]);
        assert!(tried.is_empty());
        assert_eq!(found, vec![0]);
    }
}
