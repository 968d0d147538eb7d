//! W's block pattern for the frictional one-step problem
//! ([`super::friction_step`]): which d × d blocks are stored, which
//! product out_α,s · resp_β,s lands in which block, and the filling of the
//! values over a pattern — for the contacts of one active set, or for every
//! contact of the model at once (inactive contacts then hold the identity
//! block, no coupling and q = 0, so that their impulse is P = 0).

use super::interaction_work::{InteractionWork, RowKind};
use crate::modelling::model::{Model, SystemId};
use crate::numerics::matrix::Block;
use crate::numerics::BlockSparseMatrix;
use crate::simulation::error::SimulationError;

/// One product out_α,s · resp_β,s of the assembly of W: interactions α and
/// β (both in the pattern) share system s, the `ka`-th of α and the `kb`-th
/// of β. Entry (r, c) of the product (row r of α, row c of β) lands in
/// stored block `Pattern::entry_block[at + c·m_α + r]` (an interaction with
/// several contacts spreads its rows over several block rows).
pub(super) struct Product {
    a: usize,
    ka: usize,
    b: usize,
    kb: usize,
    at: usize,
}

/// The block pattern of W over one set of interactions.
pub(super) struct Pattern {
    /// The interactions it was built for.
    pub active: Vec<usize>,
    /// The products, in assembly order.
    products: Vec<Product>,
    /// Stored block of every product entry (see [`Product`]).
    entry_block: Vec<usize>,
    /// Padded tangent rows: (stored diagonal block, row within it).
    pads: Vec<(usize, usize)>,
}

/// Where the rows of every interaction of the model sit in the problem over
/// all contacts (the positions do not depend on the active set).
pub(super) struct Layout {
    /// First row of each interaction among all rows (natural order).
    pub first_row: Vec<usize>,
    /// Problem position of every row.
    pub place: Vec<usize>,
    /// μ of every contact (0 for a complementarity row).
    pub mu: Vec<f64>,
    /// Padded tangent positions.
    pub padded: Vec<usize>,
    /// The interaction of every contact.
    pub contact_of: Vec<usize>,
}

impl Layout {
    /// The layout of all contacts of dimension `d` (none of the rows is an
    /// equality: the caller checks).
    pub fn new(inters: &[InteractionWork], d: usize) -> Layout {
        let total: usize = inters.iter().map(|w| w.m).sum();
        let mut lay = Layout {
            first_row: Vec::with_capacity(inters.len()),
            place: vec![usize::MAX; total],
            mu: Vec::new(),
            padded: Vec::new(),
            contact_of: Vec::new(),
        };
        let mut n = 0;
        for (a, w) in inters.iter().enumerate() {
            lay.first_row.push(n);
            for (r, kind) in w.rows.iter().enumerate() {
                let row = n + r;
                let (mu, dim) = match kind {
                    RowKind::FrictionNormal => {
                        let f = w.friction.expect("frictional contact");
                        (f.mu, f.dim)
                    }
                    RowKind::Complementarity => (0.0, 1),
                    RowKind::FrictionTangent | RowKind::Equality | RowKind::Box(..) => continue,
                };
                let c = lay.mu.len();
                lay.mu.push(mu);
                lay.contact_of.push(a);
                for j in 0..d {
                    if j < dim {
                        lay.place[row + j] = c * d + j;
                    } else {
                        lay.padded.push(c * d + j);
                    }
                }
            }
            n += w.m;
        }
        lay
    }
}

/// Builds W's block pattern over the interactions `active` (values zero)
/// and the map of every product entry to its block. `row_of` gives each
/// interaction's first row (usize::MAX for one outside the pattern),
/// `place` each row's position in the contacts' problem, `padded` the
/// padded positions.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_pattern(
    model: &Model,
    inters: &[InteractionWork],
    active: &[usize],
    row_of: &[usize],
    place: &[usize],
    padded: &[usize],
    d: usize,
    nc: usize,
) -> Result<(BlockSparseMatrix, Pattern), SimulationError> {
    let mut products = Vec::new();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut entry_pair = Vec::new();
    // The pairs of one interaction, sorted and deduplicated on their own:
    // the contacts (block rows) of the interactions come in increasing
    // order, so the concatenation is sorted (checked below; sorted whole
    // otherwise).
    let mut local: Vec<(usize, usize)> = Vec::new();
    for &a in active {
        let wa = &inters[a];
        let oa = row_of[a];
        local.clear();
        for r in 0..wa.m {
            let p = place[oa + r];
            if p != usize::MAX {
                local.push((p / d, p / d));
            }
        }
        for (ka, &s) in wa.systems.iter().enumerate() {
            for b_id in model.interactions_of(SystemId(s)) {
                let ob = row_of[b_id.0];
                if ob == usize::MAX {
                    continue;
                }
                let wb = &inters[b_id.0];
                let kb = wb
                    .systems
                    .iter()
                    .position(|&x| x == s)
                    .expect("linked system");
                products.push(Product {
                    a,
                    ka,
                    b: b_id.0,
                    kb,
                    at: entry_pair.len(),
                });
                for c in 0..wb.m {
                    for r in 0..wa.m {
                        let pair = (place[oa + r] / d, place[ob + c] / d);
                        entry_pair.push(pair);
                        local.push(pair);
                    }
                }
            }
        }
        local.sort_unstable();
        local.dedup();
        pairs.extend_from_slice(&local);
    }
    // Every contact's diagonal block (an interaction of the pattern always
    // couples with itself; kept explicit for the identity of inactive ones;
    // a padded tangent lies in its contact's diagonal block).
    let diagonal = (0..nc).all(|c| pairs.binary_search(&(c, c)).is_ok());
    let sorted = pairs.windows(2).all(|w| w[0] < w[1]);
    if !(sorted && diagonal) {
        pairs.extend(padded.iter().map(|&p| (p / d, p / d)));
        pairs.extend((0..nc).map(|c| (c, c)));
        pairs.sort_unstable();
        pairs.dedup();
    }
    let blocks = pairs
        .iter()
        .map(|&(row, col)| Block {
            row,
            col,
            values: vec![0.0; d * d],
        })
        .collect();
    let sizes = vec![d; nc];
    let w = BlockSparseMatrix::new(&sizes, &sizes, blocks).map_err(SimulationError::Numerics)?;
    let index = |(r, c): (usize, usize)| w.block_index(r, c).expect("stored block");
    let entry_block = entry_pair.iter().map(|&pair| index(pair)).collect();
    let pads = padded
        .iter()
        .map(|&p| (index((p / d, p / d)), p % d))
        .collect();
    let pattern = Pattern {
        active: active.to_vec(),
        products,
        entry_block,
        pads,
    };
    Ok((w, pattern))
}

/// Writes W's values over its pattern: every product out_α,s · resp_β,s
/// summed into its blocks, and 1 on the padded tangent rows. With
/// `only_active`, products with an inactive interaction are left out (the
/// blocks of inactive contacts are then written by [`identity_inactive`]).
pub(super) fn fill_values(
    w: &mut BlockSparseMatrix,
    pat: &Pattern,
    inters: &[InteractionWork],
    row_of: &[usize],
    place: &[usize],
    d: usize,
    only_active: bool,
) {
    w.values_mut().fill(0.0);
    for pr in &pat.products {
        let (wa, wb) = (&inters[pr.a], &inters[pr.b]);
        if only_active && !(wa.active && wb.active) {
            continue;
        }
        let (out_a, resp_b) = (&wa.out[pr.ka], &wb.resp[pr.kb]);
        let (oa, ob) = (row_of[pr.a], row_of[pr.b]);
        for c in 0..wb.m {
            let pc = place[ob + c] % d;
            for r in 0..wa.m {
                let rr = place[oa + r] % d;
                let mut v = 0.0;
                for i in 0..out_a.ncols() {
                    v += out_a[(r, i)] * resp_b[(i, c)];
                }
                let blk = pat.entry_block[pr.at + c * wa.m + r];
                w.block_values_mut(blk)[pc * d + rr] += v;
            }
        }
    }
    for &(blk, j) in &pat.pads {
        w.block_values_mut(blk)[j * d + j] = 1.0;
    }
}

/// Over the pattern of all contacts: the identity on the diagonal block of
/// every contact whose interaction is inactive (its other blocks are zero).
pub(super) fn identity_inactive(
    w: &mut BlockSparseMatrix,
    lay: &Layout,
    inters: &[InteractionWork],
    d: usize,
) {
    for (c, &a) in lay.contact_of.iter().enumerate() {
        if inters[a].active {
            continue;
        }
        let k = w.block_index(c, c).expect("diagonal block");
        let blk = w.block_values_mut(k);
        blk.fill(0.0);
        for j in 0..d {
            blk[j * d + j] = 1.0;
        }
    }
}

/// The contacts (block row, block column) of every stored block of `w`.
pub(super) fn block_pairs(w: &BlockSparseMatrix) -> Vec<(usize, usize)> {
    let p = w.parts();
    (0..p.row_ptr.len() - 1)
        .flat_map(|r| (p.row_ptr[r]..p.row_ptr[r + 1]).map(move |k| (r, p.block_col[k])))
        .collect()
}

/// Over the pattern of all contacts with constant blocks: W of the active
/// set from `full` (W as if every interaction were active; `pairs` the
/// contacts of each stored block, every block d × d): a block of two
/// active contacts is copied, a diagonal block of an inactive one is the
/// identity, any other block zero — the values [`fill_values`] and
/// [`identity_inactive`] would compute, without the products.
pub(super) fn select_blocks(
    w: &mut BlockSparseMatrix,
    full: &[f64],
    pairs: &[(usize, usize)],
    lay: &Layout,
    inters: &[InteractionWork],
    d: usize,
) {
    let dd = d * d;
    for (k, &(r, c)) in pairs.iter().enumerate() {
        let both = inters[lay.contact_of[r]].active && inters[lay.contact_of[c]].active;
        let blk = w.block_values_mut(k);
        if both {
            blk.copy_from_slice(&full[k * dd..(k + 1) * dd]);
        } else {
            blk.fill(0.0);
            if c == r {
                for j in 0..d {
                    blk[j * d + j] = 1.0;
                }
            }
        }
    }
}
