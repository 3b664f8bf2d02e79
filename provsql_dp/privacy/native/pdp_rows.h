/* pdp_rows.h (part of pdp_buckets.c): the per-row code, which pdp_buckets.c includes once per
 * variant (PDP_NAME, PDP_CEIL: see there). */

/* One nonzero total c of part p: its bucket row updated (0: out of memory, -1: an estimate
 * beyond int64, which native_pass_sql's bound on beta rules out). */
static inline int PDP_NAME(add_total)(state *S, int32_t p, double c) {
	const params *P = &S->P;
	bucket *b;
	if (P->cell_bits && c >= 1.0 && c < INFINITY) { /* the cell table, when it decides */
		struct cell *T = cell_of(S, c);
		if (!T) {
			return 0;
		}
		if (c > T->safe_lo && !(c >= T->nk_lo && c <= T->nk_hi) && !(c >= T->nm_lo && c <= T->nm_hi)) {
			int64_t k = T->k0 + (c > T->nk), m = T->m0 + (c > T->nm);
			if ((double)m < P->cap_min) {
				b = find_far(S, (int64_t)((uint64_t)k * 2u + (uint64_t)p), m);
				if (!b) {
					return 0;
				}
				add_to(b, c);
				return 1;
			}
		}
	}
	if (c > 0 && c < INFINITY) { /* bucket_sql's ln guard (NaN fails both) */
		double l = log(c);
		double fk = (l + P->ln2t) * P->ib; /* near_sql's fk, bucket_sql's k before ceil */
		double fm = (l - P->ltm) * P->ib;
		double cfk = PDP_CEIL(fk), cfm = PDP_CEIL(fm);
		double k = cfk - 1, m = cfm;
		/* near_sql's predicate. Fast test first: with u = fk - ceil(fk), v = fm - ceil(fm) in
		 * (-1, 0] (exact differences), a total c >= 1 whose u, v lie farther than
		 * fast = 1e-7/beta from both ends has dk, dm in [1e-7, beta - 1e-7] up to a relative
		 * 2^-52, so every term of the predicate is false (dk*c >= 1e-7*c > coef*(c + 0.5),
		 * dk < beta - 1e-9, 1e-9 < dm < beta - 1e-9, c >= 1e-8) but the caps, tested too.
		 * Any other total evaluates the predicate itself, term by term. */
		double u = fk - cfk, v = fm - cfm;
		int near;
		if (c >= 1.0 && u < -P->fast && u > P->fast - 1.0 && v < -P->fast && v > P->fast - 1.0) {
			near = !(cfm < P->cap_min) &&
			       ((fabs(cfm - P->caps[1]) <= 1.0) | (fabs(cfm - P->caps[4]) <= 1.0));
		} else {
			double dk = P->beta * (fk - cfk + 1), dm = P->beta * (fm - cfm + 1);
			near = (dk * c <= P->coef * (c + 0.5)) | (dk > P->beta - 1e-9) | (dm < 1e-9) |
			       (dm > P->beta - 1e-9) | (c < 1e-8);
			for (int i = 0; i < 6; i++) {
				near |= cfm == P->caps[i];
			}
		}
		if (!(fabs(k) < 0x1p62 && fabs(m) < 0x1p62)) {
			return -1; /* beta below ~1e-15: not an int64 key (the caller takes the SQL pass) */
		}
		int64_t kp = (int64_t)((uint64_t)(int64_t)k * 2u + (uint64_t)p);
		b = near ? find_slot(S, kp, (int64_t)m, near_key(P, c, k, m)) : find_far(S, kp, (int64_t)m);
		if (!b) {
			return 0;
		}
		add_to(b, c);
		return 1;
	}
	/* ln NULL: k, m NULL; near_sql is NULL except its term c < 1e-8 (negative totals), and
	 * near_key_sql then has every bound NULL: no window, cell = the caps below c */
	double e = 0.0;
	if (d_lt(c, 1e-8)) {
		int cell = d_gt(c, P->cap_exp) + d_gt(c, P->cap_eps);
		e = -1 - (key_kg(P, c) * 16 + cell);
	}
	b = find_slot(S, p, NULLKEY, e);
	if (!b) {
		return 0;
	}
	add_rest(b, c);
	return 1;
}

static void PDP_NAME(update)(duckdb_function_info info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	idx_t n = duckdb_data_chunk_get_size(input);
	idx_t ncols = duckdb_data_chunk_get_column_count(input);
	if (n == 0) {
		return;
	}
	double spec[8];
	params P;
	if (!read_spec(duckdb_data_chunk_get_vector(input, ncols - 1), 0, spec)) {
		duckdb_aggregate_function_set_error(info, "pdp_buckets: the spec must be a 64-byte BLOB");
		return;
	}
	params_from(&P, spec);
	if (ncols == 3 && P.mode != 2) {
		duckdb_aggregate_function_set_error(info, "pdp_buckets: two totals need spec mode 2");
		return;
	}
	int nparts = ncols == 3 ? 2 : 1;
	const double *col[2];
	uint64_t *valid[2];
	for (int j = 0; j < nparts; j++) {
		duckdb_vector v = duckdb_data_chunk_get_vector(input, j);
		col[j] = (const double *)duckdb_vector_get_data(v);
		valid[j] = duckdb_vector_get_validity(v);
	}
	for (idx_t i = 0; i < n; i++) {
		state *S = (state *)states[i];
		if (!S->P.set) {
			S->P = P;
		}
		for (int j = 0; j < nparts; j++) {
			if (!is_valid(valid[j], i)) {
				continue; /* NULL: the SQL's w <> 0 / c <> 0 drops it */
			}
			double x = col[j][i], w;
			int32_t p = j;
			if (P.mode == 2) {
				w = x;
			} else if (!clamp(&P, x, &w)) {
				continue;
			}
			if (!(w != 0)) { /* w <> 0 (NaN <> 0 holds in DuckDB as in C; -0 = 0) */
				continue;
			}
			if (P.mode == 1) { /* (w < 0)::INTEGER, abs(w) */
				p = w < 0;
				w = fabs(w);
			}
			int ok = PDP_NAME(add_total)(S, p, w);
			if (ok != 1) {
				duckdb_aggregate_function_set_error(info, ok == 0 ? "pdp_buckets: out of memory"
				                                                  : "pdp_buckets: beta too small");
				return;
			}
		}
	}
}

