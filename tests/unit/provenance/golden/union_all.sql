-- query: SELECT a FROM r UNION ALL SELECT x FROM e
-- plan:
--   Union ALL [v7]
--     Project [v0→v3]
--       Scan main.r [a→v0, b→v1, c→v2] protected r:a
--     Project [v4→v6]
--       Scan main.e [x→v4, y→v5] protected p:x, p:y
-- grouped: False; slots: [('column', 0), ('column', 1), ('column', 2)]
SELECT "v7", __s0, __s1, __s2 FROM (SELECT "v3" AS "v7", __s0 AS __s0, NULL AS __s1, NULL AS __s2 FROM (SELECT v0 AS "v3", __s0 FROM (SELECT "a" AS "v0", "b" AS "v1", "c" AS "v2", "a" AS __s0 FROM "memory"."main"."r") AS p) AS u0 UNION ALL SELECT "v6" AS "v7", NULL AS __s0, __s0 AS __s1, __s1 AS __s2 FROM (SELECT v4 AS "v6", __s0, __s1 FROM (SELECT "x" AS "v4", "y" AS "v5", "x" AS __s0, "y" AS __s1 FROM "memory"."main"."e") AS p) AS u1) AS top
