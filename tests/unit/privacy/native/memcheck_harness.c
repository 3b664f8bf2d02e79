/* The table code of pdp_buckets.c under valgrind (tests/unit/privacy/native/test_memcheck.py):
 * adversarial and random totals through both per-row variants, the tables grown many times,
 * combined and destroyed. Prints one line per spec; exits non-zero on a failed insert. */
#include "pdp_buckets.c"
#include <stdio.h>

duckdb_ext_api_v1 duckdb_ext_api;

int main(void) {
	double odd[] = {0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300, 1e300, -1e300, 1e-9, 1e-8, 5e-9,
	                NAN, INFINITY, -INFINITY, 1.0, -1.0, 1.7976931348623157e308};
	double specs[3][8] = {{1, -1e12, 1e12, 1.0, 0.1, 0.5, 0.25, 0},
	                      {0, -1e300, 1e300, 0.003, 1.3, 2.0, 1e-6, 0},
	                      {2, 0, 0, 250.0, 0.05, 0.0, 0.5, 0}};
	for (int sp = 0; sp < 3; sp++) {
		state A, B;
		memset(&A, 0, sizeof A);
		memset(&B, 0, sizeof B);
		params_from(&A.P, specs[sp]);
		params_from(&B.P, specs[sp]);
		uint64_t r = 12345;
		for (int i = 0; i < 100000; i++) {
			r = mix(r + (uint64_t)i);
			double c = (i % 50 == 0) ? odd[(r >> 7) % 17]
			                         : ldexp((double)(r >> 11), (int)(r % 200) - 150) * ((r & 1) ? 1 : -1);
			state *S = (i & 1) ? &A : &B;
			double w = c;
			if (S->P.mode != 2 && !clamp(&S->P, c, &w)) {
				continue;
			}
			if (!(w != 0)) {
				continue;
			}
			int32_t p = 0;
			if (S->P.mode == 1) {
				p = w < 0;
				w = fabs(w);
			}
			int ok = add_total_base(S, p, w);
#ifdef PDP_HAVE_SSE41
			ok = ok == 1 ? add_total_sse41(S, p, w) : ok;
#endif
			if (ok != 1) {
				printf("insert failed\n");
				return 1;
			}
		}
		duckdb_aggregate_state src[1] = {(duckdb_aggregate_state)&A}, dst[1] = {(duckdb_aggregate_state)&B};
		combine(NULL, src, dst, 1);
		printf("spec %d: %lu + %lu buckets\n", sp, (unsigned long)A.size, (unsigned long)B.size);
		duckdb_aggregate_state both[2] = {(duckdb_aggregate_state)&A, (duckdb_aggregate_state)&B};
		state_destroy(both, 2);
	}
	return 0;
}
