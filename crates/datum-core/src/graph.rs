//! Cycles in a directed graph: its strongly connected components, and the
//! shortest cycle through each one that has a cycle. Resolution uses it for
//! `requires` and `restart_on`; apply uses it for the order resources are
//! applied in, so both name a knot of resources the same way.
//!
//! A graph is given as adjacency lists over nodes `0..n`: `edges[v]` holds
//! `(w, payload)` for each edge from `v` to `w`, the payload being whatever
//! the caller wants back for the edge (the entry that lists a dependency,
//! the reason one resource waits for another). Everything is iterative:
//! no input, however deep its chains, can exhaust the stack.
//!
//! The answer depends on node numbers only: callers number their nodes in
//! the order they want cycles named (by resource id), and get the same
//! cycle for the same graph every time.

use std::collections::VecDeque;

const UNSEEN: u32 = u32::MAX;

/// The strongly connected components, each as its nodes in ascending
/// order; the components ordered by their smallest node.
pub fn components<E, A: AsRef<[(usize, E)]>>(edges: &[A]) -> Vec<Vec<usize>> {
    let mut comps = tarjan(edges).1;
    comps.sort_unstable_by_key(|c| c[0]);
    comps
}

/// For every component that holds a cycle (several nodes, or one with an
/// edge to itself), the shortest cycle from its smallest node back to it,
/// in order of that node.
///
/// Each step is a node and the edge it leaves by, towards the next step;
/// the last step's edge leads back to the first. Where several shortest
/// cycles exist, the search tries smaller nodes first and, between
/// parallel edges, the first listed, so the choice never varies.
pub fn shortest_cycles<E: Copy, A: AsRef<[(usize, E)]>>(edges: &[A]) -> Vec<Vec<(usize, E)>> {
    let (comp, mut comps) = tarjan(edges);
    comps.sort_unstable_by_key(|c| c[0]);
    let mut prev: Vec<Option<(usize, E)>> = vec![None; edges.len()];
    let mut cycles = Vec::new();
    for members in &comps {
        let start = members[0];
        let self_loop = edges[start].as_ref().iter().any(|&(w, _)| w == start);
        if members.len() == 1 && !self_loop {
            continue;
        }
        if let Some(cycle) = shortest_from(edges, &comp, start, &mut prev) {
            cycles.push(cycle);
        }
        for &m in members {
            prev[m] = None;
        }
    }
    cycles
}

/// Tarjan's algorithm with an explicit stack: each node's component
/// number, and the components (members sorted) in the order they close.
fn tarjan<E, A: AsRef<[(usize, E)]>>(edges: &[A]) -> (Vec<u32>, Vec<Vec<usize>>) {
    let n = edges.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut comp = vec![UNSEEN; n];
    let mut comps: Vec<Vec<usize>> = Vec::new();
    let mut counter = 0u32;
    // Each frame: a node, and the position of the next edge to follow.
    let mut work: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        work.push((root, 0));
        while let Some(&mut (v, ref mut next)) = work.last_mut() {
            if *next == 0 && index[v] == UNSEEN {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            let out = edges[v].as_ref();
            if *next < out.len() {
                let w = out[*next].0;
                *next += 1;
                if index[w] == UNSEEN {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = comps.len() as u32;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                members.sort_unstable();
                comps.push(members);
            }
        }
    }
    (comp, comps)
}

/// Breadth first from `start` along edges that stay in its component,
/// back to `start`. `prev` is all `None` on entry; the caller clears the
/// component's entries afterwards.
fn shortest_from<E: Copy, A: AsRef<[(usize, E)]>>(
    edges: &[A],
    comp: &[u32],
    start: usize,
    prev: &mut [Option<(usize, E)>],
) -> Option<Vec<(usize, E)>> {
    let mut queue = VecDeque::from([start]);
    let mut out: Vec<(usize, E)> = Vec::new();
    let mut closing = None;
    'search: while let Some(v) = queue.pop_front() {
        out.clear();
        out.extend(
            edges[v]
                .as_ref()
                .iter()
                .filter(|&&(w, _)| comp[w] == comp[start]),
        );
        // Stable: between parallel edges, the first listed wins.
        out.sort_by_key(|&(w, _)| w);
        for &(w, via) in &out {
            if w == start {
                closing = Some((v, via));
                break 'search;
            }
            if prev[w].is_none() {
                prev[w] = Some((v, via));
                queue.push_back(w);
            }
        }
    }
    let (last, via) = closing?;
    let mut path = vec![(last, via)];
    let mut at = last;
    while at != start {
        let (p, e) = prev[at]?;
        path.push((p, e));
        at = p;
    }
    path.reverse();
    Some(path)
}

#[cfg(test)]
// Reachability matrices read best indexed.
#[allow(clippy::needless_range_loop)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn graph(n: usize, pairs: &[(usize, usize)]) -> Vec<Vec<(usize, u32)>> {
        let mut edges = vec![Vec::new(); n];
        for (i, &(a, b)) in pairs.iter().enumerate() {
            edges[a].push((b, i as u32));
        }
        edges
    }

    fn nodes(cycle: &[(usize, u32)]) -> Vec<usize> {
        cycle.iter().map(|&(v, _)| v).collect()
    }

    #[test]
    fn an_acyclic_graph_has_no_cycle() {
        let g = graph(4, &[(0, 1), (1, 2), (0, 2), (3, 0)]);
        assert!(shortest_cycles(&g).is_empty());
        assert_eq!(components(&g), [vec![0], vec![1], vec![2], vec![3]]);
    }

    #[test]
    fn each_knot_gives_its_shortest_cycle_from_its_smallest_node() {
        // 0 -> 1 -> 2 -> 0 and the shortcut 1 -> 0; 3 <-> 4; 5 to itself.
        let g = graph(
            6,
            &[
                (0, 1),
                (1, 2),
                (2, 0),
                (1, 0),
                (3, 4),
                (4, 3),
                (5, 5),
                (2, 3),
            ],
        );
        let cycles = shortest_cycles(&g);
        let shapes: Vec<Vec<usize>> = cycles.iter().map(|c| nodes(c)).collect();
        assert_eq!(shapes, [vec![0, 1], vec![3, 4], vec![5]]);
        // The edges are the ones that close each step: 0 -> 1 is edge 0, 1 -> 0 edge 3.
        assert_eq!(cycles[0], [(0, 0), (1, 3)]);
        assert_eq!(cycles[2], [(5, 6)]);
        assert_eq!(components(&g), [vec![0, 1, 2], vec![3, 4], vec![5]]);
    }

    #[test]
    fn between_parallel_edges_the_first_listed_wins() {
        let g = graph(2, &[(0, 1), (0, 1), (1, 0)]);
        assert_eq!(shortest_cycles(&g), [vec![(0, 0), (1, 2)]]);
    }

    #[test]
    fn a_long_chain_does_not_exhaust_the_stack() {
        let n = 200_000;
        let mut pairs: Vec<(usize, usize)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        pairs.push((n - 1, 0));
        let cycles = shortest_cycles(&graph(n, &pairs));
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].len(), n);
    }

    /// Which nodes each node reaches in one or more steps, by brute force.
    fn reach(edges: &[Vec<(usize, u32)>]) -> Vec<Vec<bool>> {
        let n = edges.len();
        let mut r = vec![vec![false; n]; n];
        for (v, out) in edges.iter().enumerate() {
            for &(w, _) in out {
                r[v][w] = true;
            }
        }
        for k in 0..n {
            for i in 0..n {
                if r[i][k] {
                    for j in 0..n {
                        if r[k][j] {
                            r[i][j] = true;
                        }
                    }
                }
            }
        }
        r
    }

    /// The length of the shortest cycle through `s`, by brute force:
    /// distances from `s`, plus the edge back.
    fn shortest_len(edges: &[Vec<(usize, u32)>], s: usize) -> Option<usize> {
        let n = edges.len();
        let mut dist = vec![usize::MAX; n];
        dist[s] = 0;
        for _ in 0..n {
            for v in 0..n {
                if dist[v] == usize::MAX {
                    continue;
                }
                for &(w, _) in &edges[v] {
                    if w != s {
                        dist[w] = dist[w].min(dist[v] + 1);
                    }
                }
            }
        }
        (0..n)
            .filter(|&v| dist[v] != usize::MAX && edges[v].iter().any(|&(w, _)| w == s))
            .map(|v| dist[v] + 1)
            .min()
    }

    proptest! {
        #[test]
        fn agrees_with_brute_force(
            n in 1usize..9,
            raw in prop::collection::vec((0usize..9, 0usize..9), 0..24),
        ) {
            let pairs: Vec<(usize, usize)> = raw.into_iter().map(|(a, b)| (a % n, b % n)).collect();
            let g = graph(n, &pairs);
            let r = reach(&g);
            // Components: exactly the classes of mutual reachability.
            let comps = components(&g);
            let mut seen = vec![false; n];
            for c in &comps {
                for &v in c {
                    prop_assert!(!seen[v]);
                    seen[v] = true;
                    for &w in c {
                        prop_assert!(v == w || (r[v][w] && r[w][v]));
                    }
                }
            }
            prop_assert!(seen.iter().all(|&s| s));
            for a in 0..n {
                for b in 0..n {
                    let together = comps.iter().any(|c| c.contains(&a) && c.contains(&b));
                    prop_assert_eq!(together, a == b || (r[a][b] && r[b][a]));
                }
            }
            // Cycles: one per component with a cycle, from its smallest
            // node, along real edges, as short as any.
            let cycles = shortest_cycles(&g);
            let cyclic: Vec<usize> = comps.iter().map(|c| c[0]).filter(|&s| r[s][s]).collect();
            let starts: Vec<usize> = cycles.iter().map(|c| c[0].0).collect();
            prop_assert_eq!(&starts, &cyclic);
            for c in &cycles {
                let s = c[0].0;
                for (i, &(v, e)) in c.iter().enumerate() {
                    let next = c[(i + 1) % c.len()].0;
                    prop_assert_eq!(pairs[e as usize], (v, next));
                    prop_assert!(r[s][v] && r[v][s]);
                }
                prop_assert_eq!(Some(c.len()), shortest_len(&g, s));
            }
        }
    }
}
