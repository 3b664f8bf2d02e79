-- query: SELECT a + b AS s FROM r
-- plan:
--   Project [TRY_CAST(TRY_CAST(v0 AS BIGINT) + TRY_CAST(v1 AS BIGINT) AS INT)→v3]
--     Scan main.r [a→v0, b→v1, c→v2] protected r:a
-- grouped: False; slots: [('column', 0)]
SELECT "v3", __s0 FROM (SELECT TRY_CAST(TRY_CAST(v0 AS BIGINT) + TRY_CAST(v1 AS BIGINT) AS INT) AS "v3", __s0 FROM (SELECT "a" AS "v0", "b" AS "v1", "c" AS "v2", "a" AS __s0 FROM "memory"."main"."r") AS p) AS top
