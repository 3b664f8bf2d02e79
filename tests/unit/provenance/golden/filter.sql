-- query: SELECT a FROM r WHERE b > 10
-- plan:
--   Project [v0→v3]
--     Filter v1 > 10
--       Scan main.r [a→v0, b→v1, c→v2] protected r:a
-- grouped: False; slots: [('value', ('v3',))]
SELECT "v3" FROM (SELECT v0 AS "v3", __s0 FROM (SELECT * FROM (SELECT "a" AS "v0", "b" AS "v1", "c" AS "v2", "a" AS __s0 FROM "memory"."main"."r") AS f WHERE v1 > 10) AS p) AS top
