-- query: SELECT SUM(b) FROM r
-- plan:
--   Aggregate SUM weight=v3
--     Project [v0→v0, v1→v1, v2→v2, TRY_CAST(v1 AS DOUBLE)→v3]
--       Scan main.r [a→v0, b→v1, c→v2] protected r:a
-- grouped: False; slots: [('value', ('v0',))]
SELECT "v0", "v1", "v2", "v3", COALESCE(CASE WHEN (v3)::DOUBLE > 1000000000000.0::DOUBLE THEN (CASE WHEN (v3)::DOUBLE < 'inf'::DOUBLE THEN 1000000000000.0::DOUBLE END) WHEN (v3)::DOUBLE < -1000000000000.0::DOUBLE THEN (CASE WHEN (v3)::DOUBLE > '-inf'::DOUBLE THEN -1000000000000.0::DOUBLE END) ELSE (v3)::DOUBLE END, 0.0) AS __w FROM (SELECT v0 AS "v0", v1 AS "v1", v2 AS "v2", TRY_CAST(v1 AS DOUBLE) AS "v3", __s0 FROM (SELECT "a" AS "v0", "b" AS "v1", "c" AS "v2", "a" AS __s0 FROM "memory"."main"."r") AS p) AS top
