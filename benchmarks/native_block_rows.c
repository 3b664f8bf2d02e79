/* The native bucket pass's block code alone (pdp_rows.h's fast_rows), per variant: ns a row on
 * one thread over N doubles in DuckDB's chunks of 2048 rows, min of R runs (CPU time). Built and
 * run by benchmarks/native_block_rows.py (which prints the table); the spec is the unbounded
 * SUM's (signed, bounds ±1e12, θ 1, β 0.1, μ 0.5, ε2 0.25), the data uniform integers in
 * [0, 120000) as engine_speed_ab.py's salaries, in random order or sorted. */
#define _POSIX_C_SOURCE 200809L
#include "pdp_buckets.c"
#include <stdio.h>
#include <time.h>

duckdb_ext_api_v1 duckdb_ext_api;

typedef int (*block_fn)(state *, const double *, const uint64_t *, idx_t);

static double cpu_now(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double run(block_fn f, const double *xs, size_t n, int reps) {
	static const double spec[8] = {1, -1e12, 1e12, 1.0, 0.1, 0.5, 0.25, 0};
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		state S;
		memset(&S, 0, sizeof S);
		params_from(&S.P, spec);
		f(&S, xs, NULL, 2048); /* the pages built outside the timing */
		double t = cpu_now();
		for (size_t b = 0; b < n; b += 2048) {
			if (f(&S, xs + b, NULL, n - b < 2048 ? n - b : 2048) != 1) {
				fprintf(stderr, "block insert failed\n");
				exit(1);
			}
		}
		t = cpu_now() - t;
		best = t < best ? t : best;
		duckdb_aggregate_state one[1] = {(duckdb_aggregate_state)&S};
		state_destroy(one, 1);
	}
	return best * 1e9 / (double)n;
}

int main(int argc, char **argv) {
	size_t n = argc > 1 ? (size_t)atol(argv[1]) : 10000000;
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	const char *only = argc > 3 ? argv[3] : NULL; /* one variant's name */
	double *xs = (double *)malloc(n * sizeof(double));
	uint64_t r = 12345;
	for (size_t i = 0; i < n; i++) {
		r = mix(r + i);
		xs[i] = (double)(r % 120000);
	}
	const char *names[4] = {"base", "sse41", "avx2", "avx512"};
	block_fn fns[4] = {fast_rows_base, NULL, NULL, NULL};
	int have[4] = {1, 0, 0, 0};
#ifdef PDP_HAVE_X86
	__builtin_cpu_init();
	fns[1] = fast_rows_sse41;
	have[1] = __builtin_cpu_supports("sse4.1");
	fns[2] = fast_rows_avx2;
	have[2] = __builtin_cpu_supports("avx2");
#ifdef PDP_HAVE_AVX512
	fns[3] = fast_rows_avx512;
	have[3] = avx512_usable();
#endif
#endif
	for (int order = 0; order < 2; order++) {
		if (order) {
			qsort(xs, n, sizeof(double), cmp_double);
		}
		for (int v = 0; v < 4; v++) {
			if (have[v] && (!only || !strcmp(only, names[v]))) {
				printf("%s %s %.3f\n", order ? "sorted" : "random", names[v], run(fns[v], xs, n, reps));
				fflush(stdout);
			}
		}
	}
	/* DuckDB's side of an ungrouped chunk in our code: same_state over 2048 pointers */
	duckdb_aggregate_state st[2048];
	for (int i = 0; i < 2048; i++) {
		st[i] = (duckdb_aggregate_state)xs;
	}
	double t = cpu_now();
	int same = 0;
	for (size_t b = 0; b < n; b += 2048) {
		__asm__ volatile("" ::: "memory");
		same += same_state(st, 2048);
	}
	printf("same_state %.3f (%d)\n", (cpu_now() - t) * 1e9 / (double)n, same);
#ifdef PDP_HAVE_AVX512
	if (avx512_usable()) {
		t = cpu_now();
		same = 0;
		for (size_t b = 0; b < n; b += 2048) {
			__asm__ volatile("" ::: "memory");
			same += same_state_avx512(st, 2048);
		}
		printf("same_state_avx512 %.3f (%d)\n", (cpu_now() - t) * 1e9 / (double)n, same);
	}
#endif
	free(xs);
	return 0;
}
