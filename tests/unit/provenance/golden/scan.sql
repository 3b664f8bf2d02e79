-- query: SELECT a, b FROM r
-- plan:
--   Project [v0→v3, v1→v4]
--     Scan main.r [a→v0, b→v1, c→v2] protected r:a
-- grouped: False; slots: [('value', ('v3',))]
SELECT "v3", "v4" FROM (SELECT v0 AS "v3", v1 AS "v4", __s0 FROM (SELECT "a" AS "v0", "b" AS "v1", "c" AS "v2", "a" AS __s0 FROM "memory"."main"."r") AS p) AS top
