-- query: SELECT DISTINCT c FROM r
-- plan:
--   Distinct
--     Project [v2→v3]
--       Scan main.r [a→v0, b→v1, c→v2] protected r:a
-- grouped: True; slots: [('column', 0)]
SELECT "v3", __s0, dense_rank() OVER (ORDER BY __d0 NULLS FIRST) - 1 AS __t FROM (SELECT "v3", __s0, "v3" AS __d0 FROM (SELECT DISTINCT "v3", __s0 FROM (SELECT v2 AS "v3", __s0, __d0 FROM (SELECT "a" AS "v0", "b" AS "v1", "c" AS "v2", "a" AS __s0, rowid AS __d0 FROM "memory"."main"."r") AS p) AS dd) AS d) AS top ORDER BY __t
