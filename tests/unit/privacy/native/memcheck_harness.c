/* The table code of pdp_buckets.c under valgrind (tests/unit/privacy/native/test_memcheck.py):
 * adversarial and random totals through every per-row variant, the tables grown many times,
 * combined and destroyed; on the direct path the same totals through every variant's block code
 * (pdp_fine.h) too (the AVX-512 one only where the CPU has it: not under valgrind), whose rows must
 * be the per-row code's: the same keys and counts, the sums within 1e-12 relative, the same
 * minima and maxima except a far bucket's from the fine accumulators, which must bound the exact
 * ones and lie strictly inside the bucket's interval of breakpoints (1e-6 from each: so they
 * classify as the exact extremes do), and each part's largest total exact; between the block
 * variants, which add in the same order, everything bit for bit. Prints one line per spec;
 * exits non-zero on a failed insert or a mismatch. */
#include "pdp_buckets.c"
#include <stdio.h>

duckdb_ext_api_v1 duckdb_ext_api;

#define ROWS 100000

/* a far bucket's (lo, hi) from the block code (blk) against the exact ones (ref): each either
 * the exact one, or bounding it from within the breakpoints of (k, m) (1 - 1e-9 of the 1e-6
 * window: the breakpoints recomputed here may differ by an ulp) */
static int bounds_ok(const params *P, const bucket *ref, const bucket *blk) {
	if (blk->lo == ref->lo && blk->hi == ref->hi) {
		return 1;
	}
	if (blk->m == NULLKEY || bits_of(blk->e) != 0 || !(blk->lo <= ref->lo && blk->hi >= ref->hi)) {
		return 0;
	}
	double k = (double)(blk->kp >> 1), m = (double)blk->m;
	double pk = exp(k * P->beta - P->ln2t), nk = exp((k + 1) * P->beta - P->ln2t);
	double pm = exp((m - 1) * P->beta + P->ltm), nm = exp(m * P->beta + P->ltm);
	double below = (pk > pm ? pk : pm) * (1 + 0.999e-6), above = (nk < nm ? nk : nm) * (1 - 0.999e-6);
	return (blk->lo == ref->lo || blk->lo > below) && (blk->hi == ref->hi || blk->hi < above);
}

/* 0 when the tables of A and B hold the same rows (exact: sums bit for bit too; blk: 1 when B
 * is the block code's and A the per-row code's, 2 the other way round, 0 neither) */
static int differ(state *A, state *B, int exact, int blk) {
	if (A->size != B->size) {
		printf("sizes %lu and %lu\n", (unsigned long)A->size, (unsigned long)B->size);
		return 1;
	}
	double top[2][2] = {{-INFINITY, -INFINITY}, {-INFINITY, -INFINITY}}; /* [A, B][part] */
	for (uint64_t s = 0; s < A->cap; s++) {
		bucket *a = &A->slots[s];
		if (a->m == EMPTY) {
			continue;
		}
		bucket *b = find_slot(B, a->kp, a->m, a->e);
		double ti = fabs(a->inv - b->inv), tt = fabs(a->tot - b->tot);
		int same_minmax = (a->lo == b->lo || (isnan(a->lo) && isnan(b->lo))) &&
		                  (a->hi == b->hi || (isnan(a->hi) && isnan(b->hi)));
		if (!same_minmax && blk) {
			same_minmax = blk == 1 ? bounds_ok(&A->P, a, b) : bounds_ok(&A->P, b, a);
		}
		int same_inv = bits_of(a->inv) == bits_of(b->inv), same_tot = bits_of(a->tot) == bits_of(b->tot);
		int sums = a->m == NULLKEY || (exact ? same_inv && same_tot
		                                     : (same_inv || ti <= 1e-12 * fabs(a->inv)) &&
		                                           (same_tot || tt <= 1e-12 * fabs(a->tot)));
		if (a->n != b->n || !same_minmax || !sums) {
			printf("bucket (%lld, %lld, %g) differs: n %g/%g lo %.17g/%.17g hi %.17g/%.17g\n", (long long)a->kp,
			       (long long)a->m, a->e, a->n, b->n, a->lo, b->lo, a->hi, b->hi);
			return 1;
		}
		if (a->m != NULLKEY) {
			int p = (int)(a->kp & 1);
			top[0][p] = a->hi > top[0][p] ? a->hi : top[0][p];
			top[1][p] = b->hi > top[1][p] ? b->hi : top[1][p];
		}
	}
	for (int p = 0; p < 2; p++) {
		if (top[0][p] != top[1][p]) {
			printf("part %d: largest totals %.17g and %.17g\n", p, top[0][p], top[1][p]);
			return 1;
		}
	}
	return 0;
}

/* a total at or around a breakpoint of k or m (or a fine cell's start): the SQL's own
 * breakpoints, a few ulps and a relative 1e-6 either side */
static double planted(const params *P, uint64_t r) {
	double j = (double)((r >> 9) % (uint64_t)(14.0 / P->beta + 1)); /* totals up to ~e^14 */
	double t = (r & 8) ? exp((j + 1) * P->beta - P->ln2t) : exp(j * P->beta + P->ltm);
	if ((r >> 40) % 7 == 0) { /* a fine cell's start */
		int nb = P->fine_bits ? P->fine_bits : 12;
		t = ldexp(1.0 + (double)((r >> 44) % ((uint64_t)1 << nb)) / ldexp(1.0, nb), (int)((r >> 56) % 40));
	}
	switch ((r >> 32) % 8) {
	case 0: return t;
	case 1: return nextafter(t, INFINITY);
	case 2: return nextafter(t, 0);
	case 3: return nextafter(nextafter(t, INFINITY), INFINITY);
	case 4: return nextafter(nextafter(t, 0), 0);
	case 5: return t * (1 + 1e-6);
	case 6: return t * (1 - 1e-6);
	default: return t * (1 + ldexp((double)((r >> 20) % 64) - 32, -50));
	}
}

static void destroy(state *S) {
	duckdb_aggregate_state one[1] = {(duckdb_aggregate_state)S};
	state_destroy(one, 1);
}

int main(void) {
	double odd[] = {0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, 1e300, -1e300, 1e-9, 1e-8, 5e-9,
	                NAN, INFINITY, -INFINITY, 1.0, -1.0, 1.7976931348623157e308, 0x1p64, -0x1p64,
	                0x1.fffffffffffffp63, 0x1.0000000000001p64, 0x1.fffffffffffffp-1, -0x1.fffffffffffffp-1};
	const int nodd = (int)(sizeof odd / sizeof odd[0]);
	double specs[3][8] = {{1, -1e12, 1e12, 1.0, 0.1, 0.5, 0.25, 0},
	                      {0, -1e300, 1e300, 0.003, 1.3, 2.0, 1e-6, 0},
	                      {2, 0, 0, 250.0, 0.05, 0.0, 0.5, 0}};
	double *xs = (double *)malloc(ROWS * sizeof(double));
	uint64_t valid[(ROWS + 63) / 64];
	for (int sp = 0; sp < 3; sp++) {
		state A, B, R;
		memset(&A, 0, sizeof A);
		memset(&B, 0, sizeof B);
		memset(&R, 0, sizeof R);
		params_from(&A.P, specs[sp]);
		params_from(&B.P, specs[sp]);
		params_from(&R.P, specs[sp]);
		uint64_t r = 12345;
		memset(valid, 0xFF, sizeof valid);
		for (int i = 0; i < ROWS; i++) {
			r = mix(r + (uint64_t)i);
			xs[i] = (i % 50 == 0) ? odd[(r >> 7) % nodd]
			        : (i % 5 == 1) ? planted(&R.P, r) * ((r & 4) ? 1 : -1)
			        : (i % 3 == 0) ? ldexp((double)(r >> 11), (int)(r % 200) - 150) * ((r & 1) ? 1 : -1)
			                       : (double)((r >> 20) % 120000) * ((r & 2) ? 1 : -1); /* the block path's */
			if (i % 97 == 0) {
				valid[i / 64] &= ~((uint64_t)1 << (i % 64)); /* NULL */
			}
			if (!(valid[i / 64] >> (i % 64) & 1)) {
				continue;
			}
			state *S = (i & 1) ? &A : &B;
			int ok = one_value_base(S, xs[i], 0);
			ok = ok == 1 ? one_value_base(&R, xs[i], 0) : ok;
#ifdef PDP_HAVE_X86
			ok = ok == 1 ? one_value_sse41(S, xs[i], 0) : ok;
			ok = ok == 1 ? one_value_avx2(S, xs[i], 0) : ok;
#endif
			if (ok != 1) {
				printf("insert failed\n");
				return 1;
			}
		}
		if (R.P.fine_bits) { /* the block code of each variant, by chunks, against R */
			int (*block[4])(state *, const double *, const uint64_t *, idx_t) = {fast_rows_base,
#ifdef PDP_HAVE_X86
			                                                                     fast_rows_sse41, fast_rows_avx2,
			                                                                     /* not under valgrind (no AVX-512: its
			                                                                      * CPUID says so); test_memcheck runs
			                                                                      * the harness without it too */
			                                                                     avx512_usable() ? fast_rows_avx512 : NULL
#else
			                                                                     NULL, NULL, NULL
#endif
			};
			state F[4];
			int nv = 0;
			for (int v = 0; v < 4 && block[v]; v++, nv++) {
				memset(&F[v], 0, sizeof F[v]);
				params_from(&F[v].P, specs[sp]);
				for (int b = 0; b < ROWS; b += 2047) { /* odd chunks: every tail of the loops */
					idx_t n = ROWS - b < 2047 ? ROWS - b : 2047;
					uint64_t vm[32];
					for (idx_t i = 0; i < n; i++) { /* the chunk's own validity mask */
						vm[i / 64] = (i % 64 ? vm[i / 64] : 0) | (uint64_t)(valid[(b + i) / 64] >> ((b + i) % 64) & 1) << (i % 64);
					}
					if (block[v](&F[v], xs + b, vm, n) != 1) {
						printf("block insert failed\n");
						return 1;
					}
				}
				if (!fine_fold(&F[v]) || differ(&R, &F[v], 0, 1) || differ(&F[v], &R, 0, 2) ||
				    (v && (differ(&F[0], &F[v], 1, 0) || differ(&F[v], &F[0], 1, 0)))) {
					printf("spec %d: the block code of variant %d differs\n", sp, v);
					return 1;
				}
			}
			printf("spec %d: block code = per-row code (%u accumulators, %d variants)\n", sp, F[0].acc_n, nv);
			for (int v = 0; v < nv; v++) {
				destroy(&F[v]);
			}
		}
		duckdb_aggregate_state src[1] = {(duckdb_aggregate_state)&A}, dst[1] = {(duckdb_aggregate_state)&B};
		combine(NULL, src, dst, 1);
		printf("spec %d: %lu + %lu buckets\n", sp, (unsigned long)A.size, (unsigned long)B.size);
		duckdb_aggregate_state both[3] = {(duckdb_aggregate_state)&A, (duckdb_aggregate_state)&B,
		                                  (duckdb_aggregate_state)&R};
		state_destroy(both, 3);
	}
	free(xs);
#ifdef PDP_HAVE_X86
	/* the AVX-512 same_state against the generic one: one pointer differs, at every place of
	 * chunks of every length up to 40 (the 16-pointer loop and its tail) */
	if (avx512_usable()) {
		duckdb_aggregate_state st[40];
		int agree = 1, other = 0;
		for (int n = 1; n <= 40; n++) {
			for (int at = -1; at < n; at++) {
				for (int i = 0; i < n; i++) {
					st[i] = (duckdb_aggregate_state)(i == at ? &other : &agree);
				}
				agree &= same_state_avx512(st, (idx_t)n) == same_state(st, (idx_t)n) &&
				         same_state(st, (idx_t)n) == (at < 0 || n == 1);
			}
		}
		printf("same_state: avx512 %s\n", agree ? "agrees" : "DIFFERS");
		if (!agree) {
			return 1;
		}
	}
#endif
	return 0;
}
